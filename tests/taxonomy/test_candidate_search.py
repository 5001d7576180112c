from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from shared.taxonomy.search import FusionWeights, exemplar_scores

PILLOW = "Velvet Throw Pillow 18x18\nA soft decorative pillow for the sofa, &quot;navy&quot; cover, SKU TP-1818"


def test_scores_are_in_unit_interval_and_sorted(google_index):
    candidates = google_index.candidates(PILLOW, limit=5)
    scores = [c.score for c in candidates]
    assert len(candidates) == 5
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_best_candidate_matches_the_title(google_index, shopify_index):
    assert google_index.candidates(PILLOW)[0].category.name == "Throw Pillows"
    assert shopify_index.candidates("Kids bicycle helmet, adjustable")[0].category.id == "sg-1-2"


def test_leafs_only_still_returns_limit_leaves(shopify_index):
    # 8 of the fixture's 9 leaves, fewer than its 18 categories.
    candidates = shopify_index.candidates(PILLOW, limit=8, leafs_only=True)
    assert len(candidates) == 8
    assert all(c.category.is_leaf for c in candidates)
    assert any(not c.category.is_leaf for c in shopify_index.candidates(PILLOW, limit=8))


def test_limit_is_respected(google_index):
    assert len(google_index.candidates(PILLOW, limit=3)) == 3


def test_results_are_deterministic(google_index):
    first = google_index.candidates(PILLOW)
    assert all(google_index.candidates(PILLOW) == first for _ in range(3))


def test_translated_names_match_non_english_listings(google_index, shopify_index):
    # "Floreros" is only in the Spanish file; Google gets it through the Shopify mapping.
    assert shopify_index.candidates("Florero de cerámica blanco")[0].category.id == "hg-1-2"
    assert google_index.candidates("Florero de cerámica blanco")[0].category.id == "13"


def test_text_without_any_letter_gives_no_candidates(google_index):
    assert google_index.candidates("12345 &amp; 678") == []


def test_threads_share_an_index(google_index):
    expected = google_index.candidates(PILLOW)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: google_index.candidates(PILLOW), range(20)))
    assert all(result == expected for result in results)


def test_text_in_an_unread_script_still_gets_candidates(google_index):
    # Georgian ("coffee cup"): no term on the lexical side, the embeddings score it.
    assert len(google_index.candidates("ყავის ჭიქა", limit=4)) == 4


def test_sentence_embeddings_read_listings_no_alias_translates(google_index):
    # No translated name of "Cat Toys" is in the fixture: only the multilingual
    # sentence encoder can tell that "juguete para gato" is one.
    assert google_index.candidates("Juguete de peluche para gato")[0].category.name == "Cat Toys"


BATCH = [
    PILLOW,
    "Kids bicycle helmet, adjustable",
    "12345 &amp; 678",
    "Florero de cerámica blanco",
    "Juguete de peluche para gato",
    "לוח שבועי",
]


def _same_candidates(many, one_by_one):
    assert [[c.category.id for c in found] for found in many] == [
        [c.category.id for c in found] for found in one_by_one
    ]
    for found, expected in zip(many, one_by_one):
        assert [c.score for c in found] == pytest.approx([c.score for c in expected], abs=1e-6)


@pytest.mark.parametrize("leafs_only", [False, True])
def test_candidates_many_gives_what_candidates_gives_one_by_one(shopify_index, leafs_only):
    many = shopify_index.candidates_many(BATCH, limit=6, leafs_only=leafs_only)
    one_by_one = [shopify_index.candidates(p, limit=6, leafs_only=leafs_only) for p in BATCH]
    _same_candidates(many, one_by_one)
    assert many[2] == []


def test_candidates_many_splits_long_inputs_into_batches(google_index, monkeypatch):
    monkeypatch.setattr("shared.taxonomy.search.BATCH_SIZE", 4)
    _same_candidates(google_index.candidates_many(BATCH), [google_index.candidates(p) for p in BATCH])
    assert google_index.candidates_many([]) == []


def test_a_name_joining_kinds_is_covered_by_one_kind_unless_a_child_is_named_after_it(google_index):
    linens_and_bedding = google_index.ids.index("14")

    def coverage(text: str) -> float:
        return float(google_index.signals_many([text])[1]["coverage"][0, linens_and_bedding])

    assert coverage("Washed cotton linens") == pytest.approx(1.0)
    # "Bedding", its child, holds the bedding.
    assert coverage("Washed cotton bedding") < 0.9


def test_google_prefers_the_category_naming_the_title_head_noun(google_index):
    # A vase that goes with throw pillows is a vase.
    assert google_index.candidates("Ceramic Vase for Throw Pillows Decor")[0].category.name == "Vases"


def test_a_category_the_head_noun_only_qualifies_loses_a_share_of_its_name_signals(google_index):
    count = len(google_index.ids)
    qualified = np.zeros((1, count), dtype=np.float32)
    qualified[0, 1] = 1.0
    signals = {"name": np.full((1, count), 10.0, dtype=np.float32), "modifier_head": qualified}
    weights = FusionWeights(modifier_name_discount=0.25, depth_penalty=0.0)
    fused = google_index.fuse(signals, weights)
    assert fused[0, 1] == pytest.approx(7.5) and fused[0, 0] == pytest.approx(10.0)


def test_a_category_the_first_word_does_not_head_loses_a_share_of_its_name_signals(google_index):
    count = len(google_index.ids)
    headed = np.zeros((2, count), dtype=np.float32)
    headed[0, 1] = 1.0  # a product-first title whose first word heads category 1's names
    signals = {"name": np.full((2, count), 10.0, dtype=np.float32), "regional_head": headed}
    weights = FusionWeights(regional_name_discount=0.5, depth_penalty=0.0)
    fused = google_index.fuse(signals, weights)
    assert fused[0, 1] == pytest.approx(10.0) and fused[0, 0] == pytest.approx(5.0)
    # A title whose first word heads no regional name loses nothing.
    assert fused[1, 0] == pytest.approx(10.0)


def test_exemplar_scores_with_a_margin_count_only_what_comes_near_the_closest():
    similarities = np.array([0.9, 0.8, 0.7, 0.4, -0.1], dtype=np.float32)
    np.testing.assert_allclose(
        exemplar_scores(similarities, 0.0), [0.9, 0.8, 0.7, 0.4, 0.0], atol=1e-6
    )
    np.testing.assert_allclose(
        exemplar_scores(similarities, 0.15), [0.15, 0.05, 0.0, 0.0, 0.0], atol=1e-6
    )
    assert exemplar_scores(np.zeros(0, dtype=np.float32), 0.15).shape == (0,)


GROOMING = (
    "Dog Wash and Brush\nTreat your dog to our grooming session, designed for long coats."
    " Book an appointment at the salon."
)


def test_a_service_is_filed_in_the_services_branch_where_the_taxonomy_has_one(shopify_index):
    assert shopify_index.candidates(GROOMING)[0].category.tags[0] == "Services"
    assert shopify_index.candidates("Dog Bed, washable")[0].category.tags[0] != "Services"


def test_a_service_is_filed_at_its_goods_parent_where_the_taxonomy_has_no_services(google_index):
    service = (
        "Dog Bed Cleaning\nLet us wash it: our dog bed cleaning service, designed for any bed."
        " Book an appointment."
    )
    goods = service.replace("our dog bed cleaning service", "a dog bed cleaning spray")
    assert google_index.candidates(goods)[0].category.name == "Dog Beds"
    candidates = google_index.candidates(service)
    assert candidates[0].category.name == "Dog Supplies"
    # The leaves come after every parent, in their own order.
    is_leaf = [c.category.is_leaf for c in candidates]
    assert is_leaf == sorted(is_leaf)
    assert next(c for c in candidates if c.category.is_leaf).category.name == "Dog Beds"
    # A request for leaves gets them undiscounted: the leaf the parent took its score from.
    leaves = google_index.candidates(service, leafs_only=True)
    assert leaves[0].category.name == "Dog Beds"
    assert leaves[0].score == pytest.approx(candidates[0].score)


@pytest.mark.parametrize("taxonomy", ["Google", "Shopify"])
def test_a_batch_files_only_its_service_listings_as_services(google_index, shopify_index, taxonomy):
    index = google_index if taxonomy == "Google" else shopify_index
    products = ["Dog Bed, washable", GROOMING, "Ceramic Vase for Throw Pillows Decor"]
    _same_candidates(index.candidates_many(products), [index.candidates(p) for p in products])
    assert index.candidates_many(products)[0][0].category.name == "Dog Beds"

"""Product knowledge: the store's format, the check script, and what the index makes of it."""

import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from shared.taxonomy.files import load_taxonomy
from shared.taxonomy.knowledge import check, pack
from shared.taxonomy.knowledge.store import DATA_DIR, folder_name, load_knowledge
from shared.taxonomy import search
from shared.taxonomy.service import category_knowledge, load_index
from tests.conftest import TAXONOMY_DIR

FIXTURES = Path(__file__).parent / "data"


def write(folder: Path, name: str, lines: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def record(category_id: str, titles: int = 5, terms: int = 8) -> str:
    return json.dumps(
        {
            "id": category_id,
            "titles": [f"title {n}" for n in range(titles)],
            "terms": [f"term {n}" for n in range(terms)],
        }
    )


def test_every_reference_category_has_a_well_formed_record():
    # The shipped knowledge covers every category of the reference files.
    for name in ("Google", "Shopify"):
        report = check.check(load_taxonomy(TAXONOMY_DIR, name))
        assert report.malformed == []
        assert report.missing == [], f"{name}: {len(report.missing)} categories without a record"
        assert report.unknown == []


def test_check_names_missing_malformed_unknown_and_thin(tmp_path):
    taxonomy = load_taxonomy(FIXTURES, "Google")
    ids = list(taxonomy.categories)
    folder = tmp_path / folder_name("Google", taxonomy.version)
    write(
        folder, "a.jsonl", [record(ids[0]), record(ids[1], titles=1), "{not json", record("999999")]
    )
    write(folder, "b.jsonl", [json.dumps({"id": ids[2], "titles": "not a list", "terms": []})])
    report = check.check(taxonomy, tmp_path)
    assert report.with_record == 2
    assert report.missing == ids[2:]
    assert report.malformed == ["a.jsonl:3", "b.jsonl:1"]
    assert report.unknown == ["999999"]
    assert report.thin == [ids[1]]
    assert not report.ok


def test_records_of_one_category_add_up_across_files(tmp_path):
    folder = tmp_path / folder_name("Google", "v1")
    write(folder, "a.jsonl", [record("1", titles=2, terms=1)])
    write(folder, "b.jsonl", [record("1", titles=1, terms=2)])
    knowledge = load_knowledge("Google", "v1", tmp_path)
    assert len(knowledge["1"].titles) == 3 and len(knowledge["1"].terms) == 3


def test_knowledge_is_versioned_with_the_taxonomy():
    for name in ("Google", "Shopify"):
        version = load_taxonomy(TAXONOMY_DIR, name).version
        assert (DATA_DIR / folder_name(name, version)).is_dir()


def knowledge_dir(tmp_path: Path, records: list[dict]) -> Path:
    folder = tmp_path / "knowledge"
    write(folder / folder_name("Google", "2030-01-02"), "a.jsonl", [json.dumps(r) for r in records])
    return folder


VASE_RECORD = {
    "id": "13",
    "titles": [
        "Quibbleton Amphora Vase 30 cm, glazed stoneware",
        "Quibbleton XL floor vase, white",
    ],
    "terms": ["quibbleton", "amphora", "vase", "vases"],
}


def test_words_only_the_knowledge_holds_find_their_category(taxonomy_dir, cache_dir, tmp_path):
    without = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path / "none", []))
    with_it = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, [VASE_RECORD]))
    product = "Quibbleton XL"
    assert without.candidates(product)[0].category.name != "Vases"
    best = with_it.candidates(product)[0]
    assert best.category.name == "Vases"
    # The knowledge words and the nearest exemplar both vote for it, for it exactly.
    assert best.support >= 2
    assert best.votes >= 2
    candidates = with_it.candidates(product)
    assert sum(c.votes for c in candidates) <= 4
    assert all(c.votes <= c.support for c in candidates)


def test_the_index_is_rebuilt_when_the_knowledge_changes(taxonomy_dir, cache_dir, tmp_path):
    folder = knowledge_dir(tmp_path, [])
    assert load_index(taxonomy_dir, "Google", cache_dir, folder).exemplars.offsets[-1] == 0
    write(folder / folder_name("Google", "2030-01-02"), "b.jsonl", [json.dumps(VASE_RECORD)])
    assert load_index(taxonomy_dir, "Google", cache_dir, folder).exemplars.offsets[-1] == 2


def test_the_title_head_noun_beats_a_category_naming_more_of_its_words(
    taxonomy_dir, cache_dir, tmp_path
):
    # "Bicycle Helmets" holds both words of the title; its head noun is "bicycle".
    records = [{"id": "23", "titles": ["Trek Marlin 7 mountain bike"], "terms": ["bike", "bikes"]}]
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, records))
    product = "Bicycle with helmet"
    assert index.candidates(product)[0].category.name == "Bicycles"
    # Without the head noun's bonus (Bicycles) and penalty (Helmets, which it only qualifies).
    headless = dataclasses.replace(index.weights, product_head=0, modifier_head=0)
    no_head = dataclasses.replace(index, weights=headless)
    assert no_head.candidates(product)[0].category.name == "Bicycle Helmets"


def test_pack_folds_every_file_into_one_record_per_category(tmp_path):
    taxonomy = load_taxonomy(FIXTURES, "Google")
    ids = list(taxonomy.categories)
    folder = tmp_path / folder_name("Google", taxonomy.version)
    write(folder, "a.jsonl", [json.dumps({"id": ids[1], "titles": ["A b"], "terms": ["x"]})])
    write(
        folder,
        "b.jsonl",
        [
            json.dumps({"id": ids[0], "titles": ["C"], "terms": []}),
            json.dumps({"id": ids[1], "titles": ["a  B", "D"], "terms": ["X", "y"]}),
        ],
    )
    before = load_knowledge("Google", taxonomy.version, tmp_path)
    packed = pack.pack(taxonomy, tmp_path)
    assert [p.name for p in folder.iterdir()] == [p.name for p in packed] == [pack.PACKED_NAME]
    after = load_knowledge("Google", taxonomy.version, tmp_path)
    assert list(after) == ids[:2]  # the taxonomy's order
    assert after[ids[1]].titles == ["A b", "D"] and after[ids[1]].terms == ["x", "y"]
    assert set(after) == set(before)


def test_pack_puts_texts_in_other_scripts_in_a_file_of_their_own(tmp_path):
    taxonomy = load_taxonomy(FIXTURES, "Google")
    ids = list(taxonomy.categories)
    folder = tmp_path / folder_name("Google", taxonomy.version)
    record = {"id": ids[0], "titles": ["Vase 30 cm", "花瓶 大"], "terms": ["vase", "ваза", "Vaso"]}
    write(folder, "a.jsonl", [json.dumps(record, ensure_ascii=False)])
    write(folder, "b.jsonl", [json.dumps({"id": ids[1], "titles": ["Mug"], "terms": []})])
    packed = pack.pack(taxonomy, tmp_path)
    assert [p.name for p in packed] == [pack.PACKED_NAME, pack.OTHER_SCRIPTS_NAME]
    other = [json.loads(line) for line in gzip.open(packed[1], "rt", encoding="utf-8")]
    assert other == [{"id": ids[0], "titles": ["花瓶 大"], "terms": ["ваза"]}]
    after = load_knowledge("Google", taxonomy.version, tmp_path)
    assert after[ids[0]].titles == ["Vase 30 cm", "花瓶 大"]
    assert after[ids[0]].terms == ["vase", "Vaso", "ваза"]
    assert after[ids[1]].titles == ["Mug"]


def test_a_category_only_qualified_by_the_title_head_noun_sells_its_accessory(
    taxonomy_dir, cache_dir, tmp_path
):
    # The helmet's knowledge holds every word of the title, but "bicycle" only
    # qualifies what it sells ("bicycle helmet"): the title's head noun says a bicycle.
    helmet = {
        "id": "24",
        "titles": [
            "Giro Register MIPS urban city bicycle helmet, matte black",
            "Giro Register MIPS urban city bicycle helmet, matte white",
        ],
        "terms": [
            *["bicycle helmet", "giro register", "mips", "urban", "city"],
            *["matte black", "matte white"],
        ],
    }
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, [helmet]))
    # The helmet's exemplars counted at their full cosine, as Shopify counts them
    # (Google counts only a margin below the closest): the penalty must beat them.
    full_exemplars = dataclasses.replace(index.weights, exemplar=30.0, exemplar_margin=0.0)
    index = dataclasses.replace(index, weights=full_exemplars)
    product = "Giro Register MIPS Urban matte black city bicycle"
    assert index.candidates(product)[0].category.name == "Bicycles"
    unqualified = dataclasses.replace(index.weights, modifier_head=0)
    no_modifier = dataclasses.replace(index, weights=unqualified)
    assert no_modifier.candidates(product)[0].category.name == "Bicycle Helmets"


def test_knowledge_words_in_other_scripts_find_their_category(taxonomy_dir, cache_dir, tmp_path):
    # Hebrew and Ukrainian "glass vase": no name and no exemplar holds these words.
    vases = {"id": "13", "titles": [], "terms": ["אגרטל זכוכית", "скляна ваза"]}
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, [vases]))
    for product in ("אגרטל זכוכית גדול", "Скляна ваза для квітів"):
        best = index.candidates(product)[0]
        assert best.category.name == "Vases"
        assert best.votes >= 1


def test_regional_names_are_read_apart_and_must_be_a_list_of_strings(tmp_path):
    folder = tmp_path / folder_name("Google", "v1")
    regional = {"id": "1", "titles": ["Popcorn Maker"], "terms": [], "regional": ["crispetera"]}
    write(
        folder,
        "a.jsonl",
        [
            json.dumps(regional),
            json.dumps({"id": "2", "titles": [], "terms": [], "regional": "pochoclera"}),
        ],
    )
    knowledge = load_knowledge("Google", "v1", tmp_path)
    assert knowledge["1"].regional == ["crispetera"] and knowledge["1"].terms == []
    assert "2" not in knowledge  # a string where a list belongs: malformed


def test_pack_puts_regional_names_in_a_file_of_their_own(tmp_path):
    taxonomy = load_taxonomy(FIXTURES, "Google")
    ids = list(taxonomy.categories)
    folder = tmp_path / folder_name("Google", taxonomy.version)
    write(folder, "a.jsonl", [json.dumps({"id": ids[0], "titles": ["Vase"], "terms": ["vase"]})])
    regional = {"id": ids[0], "titles": [], "terms": [], "regional": ["florero", "Florero", "vaso"]}
    write(folder, "b.jsonl", [json.dumps(regional)])
    packed = pack.pack(taxonomy, tmp_path)
    assert [p.name for p in packed] == [pack.PACKED_NAME, pack.REGIONAL_NAME]
    lines = [json.loads(line) for line in gzip.open(packed[1], "rt", encoding="utf-8")]
    assert lines == [{"id": ids[0], "titles": [], "terms": [], "regional": ["florero", "vaso"]}]
    after = load_knowledge("Google", taxonomy.version, tmp_path)
    assert after[ids[0]].titles == ["Vase"] and after[ids[0]].regional == ["florero", "vaso"]


def test_regional_names_find_their_category_for_listings_in_spanish(
    taxonomy_dir, cache_dir, tmp_path
):
    # An invented word, so that no name, alias or exemplar holds it.
    toys = {"id": "7", "titles": [], "terms": [], "regional": ["quibblero para gatos"]}
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, [toys]))
    reading = dataclasses.replace(index, weights=dataclasses.replace(index.weights, regional=1.0))
    spanish, english = "Quibblero para el gato, azul", "Quibblero for the cat, blue"
    cat_toys = reading.ids.index("7")
    assert reading.signals_many([spanish])[1]["regional"][0, cat_toys] > 0
    # An English listing does not read them: words both languages spell alike.
    assert not reading.signals_many([english])[1]["regional"].any()


def test_the_first_word_of_a_product_first_title_finds_the_regional_names_it_heads(
    taxonomy_dir, cache_dir, tmp_path
):
    # Invented words: "quibbleros" heads the cat toys' regional name, and only
    # qualifies the dog toys' one.
    records = [
        {"id": "7", "titles": [], "terms": [], "regional": ["quibbleros para gatos"]},
        {"id": "5", "titles": [], "terms": [], "regional": ["mordedores quibbleros"]},
    ]
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, records))
    cat_toys, dog_toys = index.ids.index("7"), index.ids.index("5")
    spanish = index.signals_many(["Quibblero azul para el gato de la casa"])[1]["regional_head"]
    assert spanish[0, cat_toys] == 1.0 and spanish[0, dog_toys] == 0.0
    # An English title's first word is no head noun.
    english = index.signals_many(["Quibblero for the cat, blue"])[1]["regional_head"]
    assert not english.any()


def test_a_first_word_heading_the_regional_names_of_many_categories_is_no_head_noun(
    taxonomy_dir, cache_dir, tmp_path, monkeypatch
):
    records = [
        {"id": "7", "titles": [], "terms": [], "regional": ["quibbleros para gatos"]},
        {"id": "5", "titles": [], "terms": [], "regional": ["quibbleros para perros"]},
    ]
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, records))
    listing = "Quibblero azul para el gato de la casa"
    assert index.signals_many([listing])[1]["regional_head"].sum() == 2.0
    monkeypatch.setattr(search, "MAX_REGIONAL_HEAD_CATEGORIES", 1)
    assert not index.signals_many([listing])[1]["regional_head"].any()


def test_a_first_word_heading_regional_names_discounts_the_english_head_noun(
    taxonomy_dir, cache_dir, tmp_path
):
    cat_toys = {"id": "7", "titles": [], "terms": [], "regional": ["quibbleros para gatos"]}
    index = load_index(taxonomy_dir, "Google", cache_dir, knowledge_dir(tmp_path, [cat_toys]))
    vases = index.ids.index("13")
    kept = dataclasses.replace(index.weights, english_head_discount=0.0)
    halved = dataclasses.replace(index.weights, english_head_discount=0.5)

    def head_bonus_lost(listing: str) -> float:
        signals = index.signals_many([listing], halved)[1]
        return float(index.fuse(signals, kept)[0, vases] - index.fuse(signals, halved)[0, vases])

    # The last word ("vase", a line's name here) is read as the head noun of both
    # titles; only the Spanish one's first word heads a category's regional names.
    spanish = "Quibblero azul Vase\nEl quibblero de la casa es para el gato"
    english = "Blue Quibble Vase\nThe quibble of the house is for the cat"
    signals = index.signals_many([spanish, english], halved)[1]
    assert signals["product_head"][:, vases].tolist() == [1.0, 1.0]
    english_bonus = sum(
        getattr(halved, name) * signals[name][0, vases] for name in search.ENGLISH_HEAD_SIGNALS
    )
    assert head_bonus_lost(spanish) == pytest.approx(0.5 * english_bonus)
    assert head_bonus_lost(english) == 0.0


# A description that says what the product is (query.description_head).
VASE_DESCRIPTION = "This hand-blown glass vase is made for tall stems."


def test_the_noun_a_description_says_the_product_is_finds_the_category_it_heads(google_index):
    vases = google_index.ids.index("13")
    listings = [
        f"Ocean Dream\n{VASE_DESCRIPTION}",
        "Ocean Dream\nThe glass is hand-blown, for tall stems.",
    ]
    described = google_index.signals_many(listings)[1]["description_head"]
    assert described[0, vases] == 1.0 and described[0].sum() < described.shape[1]
    assert not described[1].any()  # the glass is what it is made of


def test_a_design_name_title_is_read_as_the_product_its_description_names(google_index):
    vases = google_index.ids.index("13")
    # Three words: the title is read as it is, its head noun is "collection".
    listings = [f"Ocean Dream\n{VASE_DESCRIPTION}", f"Ocean Dream Collection\n{VASE_DESCRIPTION}"]
    heads = google_index.signals_many(listings)[1]["product_head"]
    assert heads[0, vases] == 1.0
    assert heads[1, vases] == 0.0
    # Every signal reads it so, the sentence encoder's included.
    sentences, signals = google_index.signals_many(listings[:1])
    named = f"Ocean Dream vase\n{VASE_DESCRIPTION}"
    named_sentences, named_signals = google_index.signals_many([named])
    assert np.array_equal(sentences, named_sentences)
    assert signals.keys() == named_signals.keys()
    assert all(np.array_equal(signals[name], named_signals[name]) for name in signals)


def test_google_takes_the_terms_and_regional_names_of_the_shopify_categories_mapped_to_it(
    taxonomy_dir, tmp_path
):
    # shopify_to_google.tsv maps Shopify's Vases (hg-1-2) to Google's (13).
    folder = tmp_path / "knowledge"
    vases = {"id": "hg-1-2", "titles": ["Vase"], "terms": ["ваза"], "regional": ["florero"]}
    write(folder / folder_name("Shopify", "2031-07"), "a.jsonl", [json.dumps(vases)])
    google = load_taxonomy(taxonomy_dir, "Google")
    knowledge = category_knowledge(google, taxonomy_dir, folder)
    assert knowledge["13"].terms == ["ваза"] and knowledge["13"].regional == ["florero"]
    assert knowledge["13"].titles == []  # titles stay the Shopify category's own


def test_pack_continues_in_a_second_file_past_its_record_limit(tmp_path, monkeypatch):
    taxonomy = load_taxonomy(FIXTURES, "Google")
    ids = list(taxonomy.categories)[:3]
    folder = tmp_path / folder_name("Google", taxonomy.version)
    write(folder, "a.jsonl", [record(category_id) for category_id in ids])
    monkeypatch.setattr(pack, "RECORDS_PER_FILE", 2)
    packed = pack.pack(taxonomy, tmp_path)
    assert [p.name for p in packed] == [pack.PACKED_NAME, pack.CONTINUED_NAME]
    second = [json.loads(line)["id"] for line in gzip.open(packed[1], "rt", encoding="utf-8")]
    assert second == ids[2:]
    assert sorted(load_knowledge("Google", taxonomy.version, tmp_path)) == sorted(ids)

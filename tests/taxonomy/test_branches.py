"""The branch models: trained from the knowledge, deterministic, and moving a product to its branch or subtree."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from shared.taxonomy import search
from shared.taxonomy.branches import FLOOR, WORD_SMOOTHING, BranchModel, title_and_term_words
from shared.taxonomy.knowledge.store import folder_name
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.query import listing_text, query_terms, semantic_text
from shared.taxonomy.search import CandidateIndex
from shared.taxonomy.service import load_index
from shared.taxonomy.text import terms


def _two_branch_model(other_scripts: bool = False) -> BranchModel:
    """Categories 0, 1 in branch 0 and 2 in branch 1; exemplar vectors around two directions."""
    generator = np.random.default_rng(0)
    directions = np.eye(8, dtype=np.float32)[[0, 1]]
    owners = np.array([0, 0, 1, 1, 2, 2, 2, 2])
    branches = np.array([0, 0, 1])
    rows = directions[branches[owners]] + 0.1 * generator.standard_normal((8, 8)).astype(np.float32)
    words = [
        title_and_term_words(["Dog bed, orthopaedic"], ["dog bed"]),
        title_and_term_words(["Chew toy for dogs"], ["dog toy"]),
        title_and_term_words(["Road bike, carbon frame"], ["bicycle", "bike"]),
    ]
    if other_scripts:  # Ukrainian "dog bed", "dog toy", "bicycle"
        for category, term in enumerate(["лежак для собаки", "іграшка для собаки", "велосипед"]):
            words[category] = {**words[category], **title_and_term_words([], [term])}
    return BranchModel.fit(branches, LowRankVectors.identity(rows), owners, words)


def test_training_is_deterministic_and_survives_the_cache_arrays():
    first, second = _two_branch_model(), _two_branch_model()
    assert np.array_equal(first.vector_weights, second.vector_weights)
    assert np.array_equal(first.words.excess, second.words.excess)
    loaded = BranchModel.from_arrays(first.to_arrays("b_"), "b_")
    query = np.eye(8, dtype=np.float32)[[1]]
    assert np.allclose(
        loaded.log_probabilities(query, [{"bike": 1.0}]),
        first.log_probabilities(query, [{"bike": 1.0}]),
    )


def test_vectors_and_words_each_point_to_their_branch():
    model = _two_branch_model()
    near_bikes = np.eye(8, dtype=np.float32)[[1]]
    scores = model.category_scores(model.log_probabilities(near_bikes, [{}]))[0]
    assert scores[2] == 0.0 and scores[0] == scores[1] < 0.0
    dog = model.log_probabilities(np.zeros((1, 8), np.float32), [{"dog": 1.0}])
    scores = model.category_scores(dog)[0]
    assert scores[0] == scores[1] == 0.0 and FLOOR <= scores[2] < 0.0


def test_words_of_other_scripts_leave_latin_script_evidence_as_it_was():
    plain, translated = _two_branch_model(), _two_branch_model(other_scripts=True)
    for query in ({"dog": 1.0, "bike": 0.3}, {"carbon": 1.0}):
        assert np.array_equal(plain.words.evidence(query), translated.words.evidence(query))
    velo = translated.log_probabilities(np.zeros((1, 8), np.float32), [{terms("велосипед")[0]: 1.0}])
    assert translated.category_scores(velo)[0][2] == 0.0


def test_without_knowledge_every_branch_is_as_likely():
    rows = np.zeros((0, 8), dtype=np.float32)
    model = BranchModel.fit(np.array([0, 1]), LowRankVectors.identity(rows), np.array([], int), [{}, {}])
    dog = model.log_probabilities(np.ones((1, 8), np.float32), [{"dog": 1.0}])
    assert np.array_equal(model.category_scores(dog), [[0.0, 0.0]])


def _index_knowing_zorbix(taxonomy_dir: Path, cache_dir: Path, tmp_path: Path) -> CandidateIndex:
    """The test taxonomy's index with one knowledge record: a made-up word filed under dog beds."""
    record = {
        "id": "4",
        "titles": ["Zorbix orthopaedic dog bed, large", "Zorbix calming donut bed for dogs"],
        "terms": ["zorbix", "dog bed", "pet bed"],
    }
    folder = tmp_path / "knowledge" / folder_name("Google", "2030-01-02")
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return load_index(taxonomy_dir, "Google", cache_dir, tmp_path / "knowledge")


def test_the_index_learns_branches_from_the_knowledge_and_moves_a_product_there(
    taxonomy_dir: Path, cache_dir: Path, tmp_path: Path
):
    # The made-up word belongs to the pets branch.
    index = _index_knowing_zorbix(taxonomy_dir, cache_dir, tmp_path)
    product = "Zorbix decor cushion"
    _, signals = index.signals_many([product])
    by_id = dict(zip(index.ids, signals["branch"][0]))
    assert by_id["4"] == by_id["1"] == 0.0
    assert by_id["11"] < 0.0 and by_id["12"] < 0.0
    without = dataclasses.replace(index, weights=dataclasses.replace(index.weights, branch=0.0))
    assert without.candidates(product)[0].category.path.startswith("Home & Garden")
    assert index.candidates(product)[0].category.path.startswith("Animals & Pet Supplies")


def test_an_unsure_listing_is_read_further_in_the_share_asked(
    taxonomy_dir: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    index = _index_knowing_zorbix(taxonomy_dir, cache_dir, tmp_path)
    short, long = "Zorbix\nA cushion.", "Zorbix\n" + "A soft cushion for the sofa. " * 8 + "Dog bed."
    texts = [short, long]
    queries = [query_terms(text) for text in texts]
    sentences = index.sentence_embedder.embed([semantic_text(text) for text in texts])
    listing = index.sentence_embedder.embed([listing_text(long) or ""])
    as_read = index.branches.log_probabilities(sentences, queries)
    read_further = index.branches.log_probabilities(listing, queries[1:])[0]
    halfway = index.branches.log_probabilities((sentences[1:] + listing) / 2, queries[1:])[0]

    def branches(share: float) -> np.ndarray:
        return index.branch_log_probabilities(texts, sentences, queries, share)

    assert np.array_equal(branches(0.0), as_read)
    monkeypatch.setattr(search, "SURE", 1.01)  # every listing unsure
    assert np.array_equal(branches(1.0)[0], as_read[0])  # nothing more to read
    assert np.array_equal(branches(1.0)[1], read_further)
    assert not np.array_equal(read_further, as_read[1])
    assert np.allclose(branches(0.5)[1], halfway)
    monkeypatch.setattr(search, "SURE", 0.0)  # every listing sure
    assert np.array_equal(branches(1.0), as_read)


def _weighting_subbranches(monkeypatch: pytest.MonkeyPatch, weight: float) -> None:
    google = search.TAXONOMY_WEIGHTS["Google"]
    monkeypatch.setitem(search.TAXONOMY_WEIGHTS, "Google", dataclasses.replace(google, subbranch=weight))


def test_the_second_level_model_tells_subtrees_of_one_branch_apart(
    taxonomy_dir: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _weighting_subbranches(monkeypatch, 8.0)
    # A made-up word filed under Throw Pillows (Decor), not under the Pillows of Linens & Bedding.
    record = {
        "id": "12",
        "titles": ["Quillow velvet cushion cover", "Quillow decorative accent cushion"],
        "terms": ["quillow", "accent cushion"],
    }
    folder = tmp_path / "knowledge" / folder_name("Google", "2030-01-02")
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    index = load_index(taxonomy_dir, "Google", cache_dir, tmp_path / "knowledge")
    classes = dict(zip(index.ids, index.subbranches.category_branches))
    # Each category's class is its ancestor at depth 1; a top-level category is its own.
    assert classes["11"] == classes["12"] == classes["13"]
    assert classes["14"] == classes["15"] == classes["16"] == classes["17"]
    assert len({classes["10"], classes["11"], classes["14"], classes["1"], classes["2"]}) == 5
    assert classes["2"] == classes["4"] == classes["7"]

    product = "Quillow pillow"
    weights = index.weights
    _, signals = index.signals_many([product], weights)
    branch = dict(zip(index.ids, signals["branch"][0]))
    subbranch = dict(zip(index.ids, signals["subbranch"][0]))
    assert branch["12"] == branch["16"] == 0.0  # one top-level branch: it cannot choose
    assert subbranch["11"] == subbranch["12"] == subbranch["13"] == 0.0
    assert FLOOR <= subbranch["16"] < 0.0 and subbranch["14"] == subbranch["16"]
    assert subbranch["10"] < 0.0  # Home & Garden itself holds no exemplar
    # Weighted, it widens Throw Pillows' lead over Pillows by its weight times Pillows' deficit.
    off = dataclasses.replace(index, weights=dataclasses.replace(weights, subbranch=0.0))
    on = dataclasses.replace(index, weights=weights)
    row_12, row_16 = index.ids.index("12"), index.ids.index("16")
    lead = [i.raw_scores_many([product])[0] for i in (off, on)]
    widened = (lead[1][row_12] - lead[1][row_16]) - (lead[0][row_12] - lead[0][row_16])
    assert widened == pytest.approx(-8.0 * subbranch["16"], rel=1e-4)
    assert "subbranch" not in off.signals_many([product], off.weights)[1]


def test_a_taxonomy_that_does_not_weight_subbranches_does_not_build_their_model(
    taxonomy_dir: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _weighting_subbranches(monkeypatch, 0.0)
    unweighted = _index_knowing_zorbix(taxonomy_dir, cache_dir, tmp_path / "a")
    assert unweighted.subbranches.vector_weights.shape[1] == 1  # one branch, nothing learnt
    assert not unweighted.subbranches.words.vocabulary
    assert not np.any(unweighted.signals_many(["Zorbix decor cushion"])[1]["subbranch"])
    # Weighting it asks for another cache entry, which holds the model.
    _weighting_subbranches(monkeypatch, 1.0)
    weighted = _index_knowing_zorbix(taxonomy_dir, cache_dir, tmp_path / "b")
    assert weighted.subbranches.vector_weights.shape[1] > 1
    # Trained on the same words, the two levels share one word map (WordMaps).
    assert weighted.subbranches.words.vocabulary is weighted.branches.words.vocabulary


def test_the_word_model_is_naive_bayes_with_smoothed_counts():
    model = _two_branch_model()
    vocabulary = len(model.words.vocabulary)
    # Branch 0's words: "dog bed orthopaed" + "dog bed" + "chew toy dog" + "dog toy": 10,
    # four of them "dog"; branch 1's: "road bike carbon frame" + "bicycl" + "bike": 6.
    expected = np.log(
        np.array([4.0 + WORD_SMOOTHING, WORD_SMOOTHING])
        / (np.array([10.0, 6.0]) + vocabulary * WORD_SMOOTHING)
    )
    assert model.words.evidence({"dog": 1.0}) == pytest.approx(expected, rel=1e-5)
    assert model.words.evidence({"dog": 2.0, "unknown": 1.0}) == pytest.approx(2 * expected, rel=1e-5)
    assert model.words.evidence({"unknown": 1.0}) is None


def test_a_model_without_vectors_reads_the_words_only():
    generator = np.random.default_rng(0)
    rows = generator.standard_normal((8, 8)).astype(np.float32)
    owners, branches = np.array([0, 0, 1, 1, 2, 2, 2, 2]), np.array([0, 0, 1])
    words = [{"dog": 2.0}, {"toy": 1.0}, {"bike": 3.0}]
    model = BranchModel.fit(branches, LowRankVectors.identity(rows), owners, words, with_vectors=False)
    anywhere = generator.standard_normal((2, 8)).astype(np.float32)
    uniform = model.log_probabilities(anywhere, [{}, {}])
    assert np.allclose(uniform, np.log(0.5))
    bike = model.category_scores(model.log_probabilities(anywhere, [{"bike": 1.0}] * 2))
    assert np.allclose(bike[0], bike[1]) and bike[0, 2] == 0.0 and bike[0, 0] < 0.0


def test_the_word_model_puts_a_clear_listing_in_its_branch_and_a_shared_word_in_neither_surely():
    """Scarves and ties (branch 0) against fabrics (branch 1), "silk" in both; words only."""
    apparel = ["Silk scarf, floral", "Wool scarf", "Cashmere scarf", "Silk tie", "Knitted tie"]
    fabric = ["Silk fabric by the yard", "Silk charmeuse fabric", "Silk chiffon", "Cotton fabric"]
    model = BranchModel.fit(
        np.array([0, 1]),
        LowRankVectors.identity(np.zeros((0, 8), dtype=np.float32)),
        np.zeros(0, np.int64),
        [title_and_term_words(apparel, ["scarf"]), title_and_term_words(fabric, ["fabric"])],
        with_vectors=False,
    )
    queries = [{"silk": 1.0, "scarf": 1.0}, {"silk": 1.0, "fabric": 1.0}, {"silk": 1.0}]
    scarf, fabric_listing, silk = np.exp(model.log_probabilities(np.zeros((3, 8), np.float32), queries))
    assert scarf[0] > 0.8 and fabric_listing[1] > 0.8
    # The shared word alone leans to the fabrics (more of their words), less surely than a clear listing.
    assert 0.5 < silk[1] < fabric_listing[1]

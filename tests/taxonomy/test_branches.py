"""The top-level branch model: trained from the knowledge, deterministic, and moving a product to its branch."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from shared.taxonomy.branches import FLOOR, BranchModel, title_and_term_words
from shared.taxonomy.knowledge.store import folder_name
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.query import listing_text, semantic_text
from shared.taxonomy.service import load_index


def _two_branch_model() -> BranchModel:
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
    return BranchModel.fit(branches, LowRankVectors.identity(rows), owners, words)


def test_training_is_deterministic_and_survives_the_cache_arrays():
    first, second = _two_branch_model(), _two_branch_model()
    assert np.array_equal(first.vector_weights, second.vector_weights)
    assert np.array_equal(first.word_log_likelihoods, second.word_log_likelihoods)
    loaded = BranchModel.from_arrays(first.to_arrays("b_"), "b_")
    query = np.eye(8, dtype=np.float32)[[1]]
    assert np.allclose(
        loaded.category_scores(query, [{"bike": 1.0}]), first.category_scores(query, [{"bike": 1.0}])
    )


def test_vectors_and_words_each_point_to_their_branch():
    model = _two_branch_model()
    near_bikes = np.eye(8, dtype=np.float32)[[1]]
    scores = model.category_scores(near_bikes, [{}])[0]
    assert scores[2] == 0.0 and scores[0] == scores[1] < 0.0
    scores = model.category_scores(np.zeros((1, 8), np.float32), [{"dog": 1.0}])[0]
    assert scores[0] == scores[1] == 0.0 and FLOOR <= scores[2] < 0.0


def test_without_knowledge_every_branch_is_as_likely():
    rows = np.zeros((0, 8), dtype=np.float32)
    model = BranchModel.fit(np.array([0, 1]), LowRankVectors.identity(rows), np.array([], int), [{}, {}])
    assert np.array_equal(model.category_scores(np.ones((1, 8), np.float32), [{"dog": 1.0}]), [[0.0, 0.0]])


def test_the_index_learns_branches_from_the_knowledge_and_moves_a_product_there(
    taxonomy_dir: Path, cache_dir: Path, tmp_path: Path
):
    # A made-up word the knowledge files under dog beds: the word belongs to the pets branch.
    record = {
        "id": "4",
        "titles": ["Zorbix orthopaedic dog bed, large", "Zorbix calming donut bed for dogs"],
        "terms": ["zorbix", "dog bed", "pet bed"],
    }
    folder = tmp_path / "knowledge" / folder_name("Google", "2030-01-02")
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    index = load_index(taxonomy_dir, "Google", cache_dir, tmp_path / "knowledge")
    product = "Zorbix decor cushion"
    _, signals = index.signals_many([product])
    by_id = dict(zip(index.ids, signals["branch"][0]))
    assert by_id["4"] == by_id["1"] == 0.0
    assert by_id["11"] < 0.0 and by_id["12"] < 0.0
    without = dataclasses.replace(index, weights=dataclasses.replace(index.weights, branch=0.0))
    assert without.candidates(product)[0].category.path.startswith("Home & Garden")
    assert index.candidates(product)[0].category.path.startswith("Animals & Pet Supplies")


def test_the_branch_model_reads_the_whole_listing_in_the_share_asked(
    taxonomy_dir: Path, cache_dir: Path
):
    index = load_index(taxonomy_dir, "Google", cache_dir)
    short, long = "Zorbix\nA cushion.", "Zorbix\n" + "A soft cushion for the sofa. " * 8 + "Dog bed."
    sentences = index.sentence_embedder.embed([semantic_text(short), semantic_text(long)])
    listing = index.sentence_embedder.embed([listing_text(long) or ""])[0]
    assert np.array_equal(index.branch_sentences([short, long], sentences, 0.0), sentences)
    whole = index.branch_sentences([short, long], sentences, 1.0)
    assert np.array_equal(whole[0], sentences[0])  # nothing more to read
    assert np.allclose(whole[1], listing) and not np.allclose(whole[1], sentences[1])
    half = index.branch_sentences([short, long], sentences, 0.5)
    assert np.allclose(half[1], (sentences[1] + listing) / 2)

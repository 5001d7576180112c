"""Classifier.classify_many: the same answers as classify(), candidates in batches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shared.ai.errors import AIRateLimited
from shared.ai.local import LocalSelector
from shared.classification.models import ClassificationRequest
from shared.classification.service import Classifier
from shared.taxonomy.service import load_index

FIXTURE_TAXONOMIES = Path(__file__).resolve().parents[1] / "taxonomy" / "data"
PRODUCTS = [
    "Velvet Throw Pillow 18x18\nA soft decorative pillow for the sofa",
    "Kids bicycle helmet, adjustable",
    "12345",
    "Juguete de peluche para gato",
]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    directory = tmp_path_factory.mktemp("taxonomies")
    shutil.copytree(FIXTURE_TAXONOMIES, directory, dirs_exist_ok=True)
    cache = tmp_path_factory.mktemp("cache")
    return {name: load_index(directory, name, cache) for name in ("Google", "Shopify")}


def requests() -> list[ClassificationRequest]:
    """Every product in both taxonomies, with and without leafs_only, interleaved."""
    return [
        ClassificationRequest(product, taxonomy, leafs_only=leafs_only, fallback_to_best_guess=True)
        for product in PRODUCTS
        for taxonomy in ("Google", "Shopify")
        for leafs_only in (False, True)
    ]


class RecordingSelector:
    """Accepts the best candidate, or raises for one product, noting what it saw."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.seen: list[str] = []

    def select(self, product, candidates, custom_instructions):
        if product == self.fail_on:
            raise AIRateLimited(retry_after=2.0)
        self.seen.append(product)
        return LocalSelector(threshold=0.0).select(product, candidates, custom_instructions)


def test_classify_many_answers_as_classify_does_in_request_order(indexes):
    classifier = Classifier(indexes, LocalSelector(), candidate_count=5)
    many = classifier.classify_many(requests())
    one_by_one = [classifier.classify(request) for request in requests()]
    assert [r.to_response() for r in many] == [r.to_response() for r in one_by_one]
    assert [[c.category.id for c in r.candidates] for r in many] == [
        [c.category.id for c in r.candidates] for r in one_by_one
    ]


def test_selector_runs_in_request_order_and_its_errors_propagate(indexes):
    selector = RecordingSelector(fail_on=PRODUCTS[1])
    classifier = Classifier(indexes, selector, candidate_count=5)
    with pytest.raises(AIRateLimited):
        classifier.classify_many(requests())
    assert selector.seen == [PRODUCTS[0]] * 4


def test_no_requests_no_results(indexes):
    assert Classifier(indexes, LocalSelector(), candidate_count=5).classify_many([]) == []

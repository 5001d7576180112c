"""The chunk runner classifies a chunk's distinct items in one batch, and keeps
per-item failures and rate-limit hand-backs as they were item by item."""

from __future__ import annotations

from datetime import timedelta

from shared.ai.errors import AIRateLimited
from shared.classification.models import CONFIDENCE_NONE, ClassificationRequest, ClassificationResult
from shared.db.base import utcnow
from shared.jobs.models import ITEM_DONE, ITEM_FAILED
from shared.flows.run_chunk import _classify
from shared.jobs.chunks import ClaimedItem

ANSWER = ClassificationResult(category=None, confidence=CONFIDENCE_NONE)


class FakeClassifier:
    """Answers every request; `classify` raises `error` for the product `broken`."""

    def __init__(self, broken: str | None = None, error: Exception | None = None) -> None:
        self.broken, self.error = broken, error
        self.batches: list[list[str]] = []
        self.singles: list[str] = []

    def classify_many(self, requests):
        self.batches.append([request.product for request in requests])
        if any(request.product == self.broken for request in requests):
            raise self.error
        return [ANSWER for _ in requests]

    def classify(self, request):
        self.singles.append(request.product)
        if request.product == self.broken:
            raise self.error
        return ANSWER


def item(position: int, product: str, duplicate_of: int | None = None) -> ClaimedItem:
    return ClaimedItem(position, ClassificationRequest(product), duplicate_of)


CHUNK = [item(0, "a"), item(1, "b"), item(2, "a", duplicate_of=0), item(3, "c"), item(4, "z", duplicate_of=90)]
LATER = utcnow() + timedelta(hours=1)


def test_distinct_unanswered_items_go_in_one_batch():
    classifier = FakeClassifier()
    ends, release, retry = _classify(classifier, CHUNK, {90: {"known": True}}, LATER)
    assert classifier.batches == [["a", "b", "c"]] and classifier.singles == []
    assert [(end.position, end.status) for end in ends] == [(p, ITEM_DONE) for p in range(5)]
    assert ends[4].body == {"known": True}
    assert (release, retry) == ([], None)


def test_a_failing_item_fails_alone():
    classifier = FakeClassifier(broken="b", error=ValueError("boom"))
    ends, release, _ = _classify(classifier, CHUNK, {90: {}}, LATER)
    assert classifier.singles == ["a", "b", "c"]
    assert [end.status for end in ends] == [ITEM_DONE, ITEM_FAILED, ITEM_DONE, ITEM_DONE, ITEM_DONE]
    assert not any(end.rate_limited for end in ends)
    assert release == []


def test_rate_limited_batch_hands_back_the_unanswered_items():
    classifier = FakeClassifier(broken="b", error=AIRateLimited(retry_after=3.0))
    ends, release, retry = _classify(classifier, CHUNK, {90: {}}, LATER)
    assert (ends, release, retry) == ([], [0, 1, 2, 3, 4], 3.0)
    assert classifier.singles == []


def test_rate_limited_past_the_deadline_fails_the_unanswered_items():
    classifier = FakeClassifier(broken="b", error=AIRateLimited(retry_after=3.0))
    ends, release, _ = _classify(classifier, CHUNK, {90: {}}, utcnow() - timedelta(seconds=1))
    assert [end.status for end in ends] == [ITEM_FAILED] * 5 and release == []
    # Counted as rate-limited in the usage, not as failed.
    assert all(end.rate_limited for end in ends)

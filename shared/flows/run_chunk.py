"""Run one chunk of a job: claim its items, classify each distinct request once, settle, send the next.

Classification happens outside any transaction: the database holds the job
row's lock only for the short claim and settle steps.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol, Sequence

from shared.ai.errors import AIRateLimited
from shared.classification.messages import INTERNAL_ERROR, RATE_LIMITED
from shared.classification.models import ClassificationRequest, ClassificationResult
from shared.db.base import utcnow
from shared.db.session import Database
from shared.flows.classify import Classifier
from shared.flows.queue import TaskSender, send_chunks
from shared.jobs import chunks
from shared.jobs.chunks import ClaimedItem, ItemEnd
from shared.jobs.models import ITEM_DONE, ITEM_FAILED
from shared.jobs.state import Chunk

logger = logging.getLogger(__name__)


class BatchClassifier(Classifier, Protocol):
    def classify_many(self, requests: Sequence[ClassificationRequest]) -> list[ClassificationResult]: ...


def run_chunk(
    database: Database,
    classifier: BatchClassifier,
    sender: TaskSender,
    chunk: Chunk,
    claimer: str,
) -> float | None:
    """Run the chunk and send the job's next one; the seconds to wait when the upstream AI asked to.

    When it asked, the chunk's rest is back on the queue for the caller to retry.
    """
    with database.session() as session:
        items = chunks.claim_chunk(session, chunk, claimer)
        if not items:
            # A duplicate delivery, or a cancelled job: the other copy sends the next chunk.
            return None
        mine = {item.position for item in items}
        originals = {item.duplicate_of for item in items if item.duplicate_of is not None}
        answers = chunks.known_answers(session, chunk.job_id, originals - mine)
        deadline = chunks.deadline_of(session, chunk.job_id)
        assert deadline is not None  # the job whose items were just claimed exists
    ends, release, retry_after = _classify(classifier, items, answers, deadline)
    with database.session() as session:
        next_chunks = chunks.settle_chunk(session, chunk, ends, release)
    send_chunks(sender, next_chunks)
    return retry_after


def _classify(
    classifier: BatchClassifier, items: list[ClaimedItem], answers: dict[int, dict], deadline: datetime
) -> tuple[list[ItemEnd], list[int], float | None]:
    """(ends, positions to give back to the queue, seconds the upstream asked to wait)."""
    ends: list[ItemEnd] = []
    try:
        _classify_distinct(classifier, items, answers)
    except AIRateLimited as exc:
        # Nothing of the batch is kept: the unanswered items go back to the queue.
        first = next(number for number, item in enumerate(items) if _key(item) not in answers)
        ends = [ItemEnd(item.position, ITEM_DONE, answers[_key(item)]) for item in items[:first]]
        return _rate_limited(ends, items[first:], deadline, exc.retry_after)
    except Exception:
        # One item broke the batch: the loop below classifies the rest one at a
        # time, so that only the failing item fails.
        logger.exception("bulk batch failed (%s); classifying its items one by one", type(classifier).__name__)
    for number, item in enumerate(items):
        key = _key(item)
        if key not in answers:
            try:
                answers[key] = classifier.classify(item.request).to_response()
            except AIRateLimited as exc:
                return _rate_limited(ends, items[number:], deadline, exc.retry_after)
            except Exception:
                logger.exception("bulk item failed (%s position %d)", type(classifier).__name__, item.position)
                ends.append(ItemEnd(item.position, ITEM_FAILED, _failure(INTERNAL_ERROR)))
                continue
        ends.append(ItemEnd(item.position, ITEM_DONE, answers[key]))
    return ends, [], None


def _classify_distinct(classifier: BatchClassifier, items: list[ClaimedItem], answers: dict[int, dict]) -> None:
    """Answer every distinct unanswered request of the chunk in one batch (candidates are cheaper so)."""
    pending = {_key(item): item.request for item in items if _key(item) not in answers}
    results = classifier.classify_many(list(pending.values()))
    answers.update((key, result.to_response()) for key, result in zip(pending, results))


def _key(item: ClaimedItem) -> int:
    """The position whose answer this item reuses: its own, or its original's."""
    return item.position if item.duplicate_of is None else item.duplicate_of


def _rate_limited(
    ends: list[ItemEnd], rest: list[ClaimedItem], deadline: datetime, retry_after: float | None
) -> tuple[list[ItemEnd], list[int], float | None]:
    if utcnow() < deadline:
        return ends, [other.position for other in rest], retry_after
    # Past the job's deadline waiting is over: these items fail and are refunded.
    ends += [ItemEnd(other.position, ITEM_FAILED, _failure(RATE_LIMITED)) for other in rest]
    return ends, [], None


def _failure(message: str) -> dict:
    return {"success": False, "error": message}

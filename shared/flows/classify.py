"""Classify one product for one credit: validate, reserve, dispatch, await; settle in the worker.

The front (`classify`) checks the request and reserves a credit, sends the
work to the interactive queue by name and awaits the worker's answer; the
worker (`perform`) classifies and settles the credit. Every refund of a
synchronous credit is decided here: the worker refunds what it could not do,
the front refunds what got no answer, the sweep (`refund_unsettled`) what
nobody settled. Every call into `shared.credits` for it is in the last four
functions.
"""

from __future__ import annotations

import functools
import logging
from datetime import timedelta
from typing import Protocol

from anyio import to_thread

from shared.ai.errors import AIRateLimited
from shared.classification.models import ClassificationRequest, ClassificationResult
from shared.classification.validation import parse_classification_request
from shared.credits import service as credits
from shared.credits.models import (
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    OUTCOME_NOT_FOUND,
    OUTCOME_RATE_LIMITED,
)
from shared.db.session import Database
from shared.flows.outcomes import Classified, Failed, Outcome, RateLimited, from_message
from shared.flows.ports import Front
from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE
from shared.validation import BodyTooLarge

logger = logging.getLogger(__name__)

# When the upstream AI says to wait but not for how long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0


class Classifier(Protocol):
    def classify(self, request: ClassificationRequest) -> ClassificationResult: ...


async def classify(
    front: Front, account_id: int, body: bytes, *, with_candidates: bool = False
) -> Outcome:
    """The outcome of the JSON request `body`, paid with one of the account's credits.

    Before anything is charged: BodyTooLarge, InvalidRequest, InsufficientCredits.
    """
    if len(body) > front.settings.max_body_bytes:
        raise BodyTooLarge()
    request = parse_classification_request(body)
    reservation_id = await to_thread.run_sync(
        _reserve, front.database, account_id, front.settings.reservation_ttl_seconds
    )
    return await _dispatch(front, request, reservation_id, with_candidates)


async def _dispatch(
    front: Front, request: ClassificationRequest, reservation_id: str, with_candidates: bool
) -> Outcome:
    """Send the work to the interactive queue and await its outcome.

    Whatever goes wrong on the way (the broker, a worker that never answers),
    the credit goes back; a worker that answers late finds it refunded and
    cannot consume it any more.
    """
    timeout = front.settings.classify_timeout_seconds
    reply_key = front.new_reply_key()
    front.replies.expect(reply_key)
    send = functools.partial(
        front.tasks.send_task,
        CLASSIFY_TASK,
        args=(request.to_dict(), reservation_id, reply_key, with_candidates),
        queue=INTERACTIVE_QUEUE,
        expires=timeout,
        # Flower and logs show this instead of the product text.
        argsrepr=f"(taxonomy={request.taxonomy!r}, reservation={reservation_id!r})",
    )
    try:
        await to_thread.run_sync(send)
        return from_message(await front.replies.wait(reply_key, timeout))
    except Exception:
        logger.exception("classification %s got no outcome; refunding", reservation_id)
        front.replies.forget(reply_key)
        await to_thread.run_sync(_refund, front.database, reservation_id, OUTCOME_FAILED)
        return Failed()


def perform(
    classifier: Classifier,
    database: Database,
    request: ClassificationRequest,
    reservation_id: str,
    with_candidates: bool = False,
) -> Outcome:
    """The worker's part: classify, then consume the reserved credit, or refund it if nothing was done."""
    try:
        result = classifier.classify(request)
    except AIRateLimited as exc:
        _refund(database, reservation_id, OUTCOME_RATE_LIMITED)
        return RateLimited(exc.retry_after or DEFAULT_RETRY_AFTER_SECONDS)
    except Exception:
        logger.exception("classification failed (reservation %s)", reservation_id)
        _refund(database, reservation_id, OUTCOME_FAILED)
        return Failed()
    _consume(database, reservation_id, found=result.category is not None)
    candidates = [
        {"id": c.category.id, "path": c.category.path, "score": c.score}
        for c in result.candidates
    ]
    return Classified(result.to_response(), candidates if with_candidates else [])


def refund_unsettled(database: Database) -> int:
    """Refund holds past their expiry that nobody settled (a front or worker that crashed mid-request)."""
    with database.session() as session:
        return credits.expire_stale(session)


def _reserve(database: Database, account_id: int, ttl_seconds: float) -> str:
    """A hold of one credit, refunded by the sweep if nobody settles it within `ttl_seconds`."""
    with database.session() as session:
        return credits.hold(session, account_id, expires_in=timedelta(seconds=ttl_seconds)).id


def _consume(database: Database, reservation_id: str, found: bool) -> None:
    with database.session() as session:
        credits.consume(session, reservation_id, OUTCOME_FOUND if found else OUTCOME_NOT_FOUND)


def _refund(database: Database, reservation_id: str, outcome: str) -> None:
    with database.session() as session:
        credits.refund(session, reservation_id, outcome)

"""Classify one product for one credit: validate, reserve, dispatch, await; settle in the worker.

The front (`classify`) checks the request and reserves a credit until the
request's deadline, sends the work to the interactive queue by name and
awaits the worker's answer; the worker (`perform`) classifies, answers, then
settles the credit. Every refund of a synchronous credit is decided here:
the worker refunds what it could not do or nobody received, the front what
got no answer by its deadline, the sweep (`refund_unsettled`) what nobody
settled. Every call into `shared.credits` for it is in the last four
functions. docs/throughput.md ("Deadlines and charging") tells why a client
is charged only for a 200.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from datetime import datetime
from typing import Callable, Protocol

from anyio import to_thread

from shared.ai.errors import AIRateLimited
from shared.classification.models import ClassificationRequest, ClassificationResult
from shared.classification.validation import parse_classification_request
from shared.credits import service as credits
from shared.credits.models import (
    OUTCOME_CANCELLED,
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    OUTCOME_NOT_FOUND,
    OUTCOME_RATE_LIMITED,
)
from shared.db.session import Database
from shared.flows.deadline import Deadline
from shared.flows.outcomes import Classified, Failed, Outcome, RateLimited, from_message
from shared.flows.ports import Front
from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE
from shared.validation import BodyTooLarge

logger = logging.getLogger(__name__)

# When the upstream AI says to wait but not for how long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0
# The end of a request's deadline kept for refunding when no answer came
# (at most a quarter of the deadline): a healthy database takes milliseconds.
SETTLE_SECONDS = 1.0


class Classifier(Protocol):
    def classify(self, request: ClassificationRequest) -> ClassificationResult: ...


async def classify(
    front: Front,
    account_id: int,
    body: bytes,
    *,
    with_candidates: bool = False,
    deadline: Deadline | None = None,
) -> Outcome:
    """The outcome of the JSON request `body`, paid with one of the account's credits.

    Before anything is charged: BodyTooLarge, InvalidRequest, InsufficientCredits.
    The credit is charged only for an outcome delivered before `deadline`
    (CLASSIFY_TIMEOUT_SECONDS from now unless given).
    """
    if deadline is None:
        deadline = Deadline.after(front.settings.classify_timeout_seconds)
    if len(body) > front.settings.max_body_bytes:
        raise BodyTooLarge()
    request = parse_classification_request(body)
    reservation_id = await to_thread.run_sync(
        _reserve, front.database, account_id, deadline.wall, abandon_on_cancel=True
    )
    return await _dispatch(front, request, reservation_id, with_candidates, deadline)


async def _dispatch(
    front: Front,
    request: ClassificationRequest,
    reservation_id: str,
    with_candidates: bool,
    deadline: Deadline,
) -> Outcome:
    """Send the work to the interactive queue and await its outcome until the deadline.

    Whatever goes wrong on the way (the broker, a worker that never answers),
    the credit goes back unless the worker charged it, and it charges it
    only after its answer was received here (see `perform`).
    """
    reply_key = front.new_reply_key()
    send = functools.partial(
        front.tasks.send_task,
        CLASSIFY_TASK,
        args=(request.to_dict(), reservation_id, reply_key, with_candidates),
        queue=INTERACTIVE_QUEUE,
        expires=deadline.remaining(),
        # Flower and logs show this instead of the product text.
        argsrepr=f"(taxonomy={request.taxonomy!r}, reservation={reservation_id!r})",
    )
    try:
        try:
            async with asyncio.timeout(_settling_starts(deadline)):
                await front.replies.expect(reply_key)
                await to_thread.run_sync(send, abandon_on_cancel=True)
        except Exception:
            logger.exception("classification %s could not be sent; refunding", reservation_id)
            refund = asyncio.create_task(_refund_reporting(front.database, reservation_id))
            # The sweep refunds what could not be by the deadline.
            await asyncio.wait({refund}, timeout=deadline.remaining())
            return Failed()
        reply = await _reply_or_refund(front, reply_key, reservation_id, deadline)
    finally:
        front.replies.forget(reply_key)
    return Failed() if reply is None else from_message(reply)


def _settling_starts(deadline: Deadline) -> float:
    """Seconds until the front stops waiting and settles: the rest of the
    deadline is kept for taking the credit back."""
    return max(0.0, deadline.remaining() - min(SETTLE_SECONDS, deadline.seconds / 4))


async def _reply_or_refund(
    front: Front, reply_key: str, reservation_id: str, deadline: Deadline
) -> dict | None:
    """The worker's reply; without one in time, None once the credit is back.

    A refund that loses to the worker's consume means the reply was sent
    before it (the worker answers first): it is awaited until the deadline.
    """
    reply = asyncio.ensure_future(front.replies.wait(reply_key))
    try:
        await asyncio.wait({reply}, timeout=_settling_starts(deadline))
        if not reply.done():
            refund = asyncio.create_task(_refund_reporting(front.database, reservation_id))
            await asyncio.wait(
                {reply, refund}, timeout=deadline.remaining(), return_when=asyncio.FIRST_COMPLETED
            )
            if not reply.done() and not (refund.done() and refund.result()):
                await asyncio.wait({reply}, timeout=deadline.remaining())
        return reply.result() if reply.done() else None
    finally:
        reply.cancel()


async def _refund_reporting(database: Database, reservation_id: str) -> bool:
    """Refund in a thread that its awaiter may stop waiting for (a stalled
    database): it then ends on its own. A failure counts as not refunded."""
    try:
        return await to_thread.run_sync(
            _refund, database, reservation_id, OUTCOME_FAILED, abandon_on_cancel=True
        )
    except Exception:
        logger.exception("could not refund reservation %s", reservation_id)
        return False


def perform(
    classifier: Classifier,
    database: Database,
    request: ClassificationRequest,
    reservation_id: str,
    answer: Callable[[Outcome], bool],
    with_candidates: bool = False,
) -> None:
    """The worker's part: classify, answer the front through `answer`, settle the credit.

    A paid outcome is answered first and charged only if `answer` says the
    front received it (a front process that died receives nothing), and
    only before the request's deadline (`credits.consume`). What was not
    done is refunded first, so that a client told to retry has its credit.
    A settlement that raises (the database away) leaves the hold to the sweep.
    """
    try:
        result = classifier.classify(request)
    except AIRateLimited as exc:
        retry_after = exc.retry_after or DEFAULT_RETRY_AFTER_SECONDS
        _refund_then_answer(database, reservation_id, OUTCOME_RATE_LIMITED, answer, RateLimited(retry_after))
        return
    except Exception:
        logger.exception("classification failed (reservation %s)", reservation_id)
        _refund_then_answer(database, reservation_id, OUTCOME_FAILED, answer, Failed())
        return
    candidates = [
        {"id": c.category.id, "path": c.category.path, "score": c.score}
        for c in result.candidates
    ]
    if not answer(Classified(result.to_response(), candidates if with_candidates else [])):
        logger.warning("nobody received the answer of reservation %s; refunding", reservation_id)
        _refund(database, reservation_id, OUTCOME_CANCELLED)
    elif not _consume(database, reservation_id, found=result.category is not None):
        logger.warning(
            "answered but not charged: reservation %s was refunded or is past its deadline",
            reservation_id,
        )


def _refund_then_answer(
    database: Database,
    reservation_id: str,
    refund_outcome: str,
    answer: Callable[[Outcome], bool],
    outcome: Outcome,
) -> None:
    """Refund, then answer even when the refund raised (the sweep refunds later)."""
    try:
        _refund(database, reservation_id, refund_outcome)
    finally:
        answer(outcome)


def refund_unsettled(database: Database) -> int:
    """Refund holds past their expiry that nobody settled (a front or worker that crashed mid-request)."""
    with database.session() as session:
        return credits.expire_stale(session)


def _reserve(database: Database, account_id: int, expires_at: datetime) -> str:
    """A hold of one credit that cannot be consumed after `expires_at`, and is
    refunded by the sweep if nobody settled it by then."""
    with database.session() as session:
        return credits.hold(session, account_id, expires_at=expires_at).id


def _consume(database: Database, reservation_id: str, found: bool) -> bool:
    with database.session() as session:
        return credits.consume(session, reservation_id, OUTCOME_FOUND if found else OUTCOME_NOT_FOUND)


def _refund(database: Database, reservation_id: str, outcome: str) -> bool:
    with database.session() as session:
        return credits.refund(session, reservation_id, outcome)

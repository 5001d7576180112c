"""Classify one product for one credit: admit, validate, reserve, dispatch, await; settle in the worker.

The front (`classify`) admits the caller, checks the request and reserves a
credit until the request's deadline in one transaction, sends the work to
the interactive queue by name (all in one thread hop) and awaits the
worker's answer; the worker (`perform`) classifies, answers, then settles
the credit. Every refund of a synchronous credit is decided here: the worker
refunds what it could not do or nobody received, the front what got no
answer by its deadline, the sweep (`refund_unsettled`) what nobody settled.
Every call into `shared.credits` for it is in `_admit_and_hold` and the last
three functions. docs/throughput.md ("Deadlines and charging") tells why a
client is charged only for a 200.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
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
from shared.flows import admission
from shared.flows.deadline import Deadline
from shared.flows.outcomes import Classified, Failed, Outcome, RateLimited, from_message
from shared.flows.ports import Front
from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE
from shared.validation import BodyTooLarge, InvalidRequest

logger = logging.getLogger(__name__)

# When the upstream AI says to wait but not for how long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0
# The end of a request's deadline kept for refunding when no answer came
# (at most a quarter of the deadline): a healthy database takes milliseconds.
SETTLE_SECONDS = 1.0


class Classifier(Protocol):
    def classify(self, request: ClassificationRequest) -> ClassificationResult: ...


@dataclass(frozen=True, slots=True)
class BearerKey:
    """An API client's `Authorization` header: checked, and its account's limit counted,
    in the transaction that holds the credit."""

    authorization: str | None


async def classify(
    front: Front,
    payer: BearerKey | int,
    body: bytes | None,
    *,
    with_candidates: bool = False,
    deadline: Deadline | None = None,
) -> Outcome:
    """The outcome of the JSON request `body`, paid with one of the payer's credits.

    `payer` is an API key to admit, or the id of an account admitted already
    (the dashboard's session). `body` is None when the reader stopped at the
    size limit. Before anything is charged, in the contract's order:
    InvalidApiKey, RateLimited (returned), BodyTooLarge, InvalidRequest,
    InsufficientCredits. The credit is charged only for an outcome delivered
    before `deadline` (CLASSIFY_TIMEOUT_SECONDS from now unless given).
    """
    if deadline is None:
        deadline = Deadline.after(front.settings.classify_timeout_seconds)
    reply_key = front.new_reply_key()
    handoff = _Handoff()
    try:
        try:
            async with asyncio.timeout(_settling_starts(deadline)):
                # Subscribed before the work is sent, so that no reply can come first.
                await front.replies.expect(reply_key)
                sent = await to_thread.run_sync(
                    _hold_and_send,
                    front,
                    payer,
                    body,
                    reply_key,
                    with_candidates,
                    deadline,
                    handoff,
                    abandon_on_cancel=True,
                )
        except TimeoutError:
            # A stalled database: the thread may still hold and send.
            reservation_id = handoff.abandon()
            if reservation_id is None:
                logger.error("no credit held by the deadline: the request is abandoned")
                return Failed()
            sent = _Sent(reservation_id)
        if isinstance(sent, RateLimited):
            return sent
        if sent.error is not None:
            logger.error("classification %s could not be sent (%r); refunding", sent.reservation_id, sent.error)
            refund = asyncio.create_task(_refund_reporting(front.database, sent.reservation_id))
            # The sweep refunds what could not be by the deadline.
            await asyncio.wait({refund}, timeout=deadline.remaining())
            return Failed()
        reply = await _reply_or_refund(front, reply_key, sent.reservation_id, deadline)
    finally:
        front.replies.forget(reply_key)
    return Failed() if reply is None else from_message(reply)


@dataclass
class _Handoff:
    """What the front's thread and its awaiter know of each other, under one lock:
    either the awaiter learns the hold (and settles it), or the thread learns
    that nobody awaits it any more (and sends nothing)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    reservation_id: str | None = None
    abandoned: bool = False

    def held(self, reservation_id: str) -> bool:
        """The thread's hold, reported; False when the awaiter has gone."""
        with self.lock:
            if not self.abandoned:
                self.reservation_id = reservation_id
            return not self.abandoned

    def abandon(self) -> str | None:
        """The awaiter goes; the hold it must settle, if the thread made one."""
        with self.lock:
            self.abandoned = True
            return self.reservation_id


@dataclass(frozen=True, slots=True)
class _Sent:
    """A held credit whose work went to the queue, or `error` if it could not."""

    reservation_id: str
    error: Exception | None = None


def _hold_and_send(
    front: Front,
    payer: BearerKey | int,
    body: bytes | None,
    reply_key: str,
    with_candidates: bool,
    deadline: Deadline,
    handoff: _Handoff,
) -> _Sent | RateLimited:
    """The front's whole synchronous part, in one thread: admit, check, hold, send."""
    held = _admit_and_hold(front, payer, body, deadline.wall)
    if isinstance(held, RateLimited):
        return held
    request, reservation_id = held
    if not handoff.held(reservation_id):
        _refund_quietly(front.database, reservation_id)
        return _Sent(reservation_id, error=TimeoutError("nobody awaits the answer"))
    try:
        front.tasks.send_task(
            CLASSIFY_TASK,
            args=(request.to_dict(), reservation_id, reply_key, with_candidates),
            queue=INTERACTIVE_QUEUE,
            expires=max(deadline.remaining(), 0.0),
            # Flower and logs show this instead of the product text.
            argsrepr=f"(taxonomy={request.taxonomy!r}, reservation={reservation_id!r})",
            # The outcome comes back on the reply channel: Celery need not
            # prepare its result backend for each task it sends.
            ignore_result=True,
        )
    except Exception as exc:
        return _Sent(reservation_id, error=exc)
    return _Sent(reservation_id)


def _admit_and_hold(
    front: Front, payer: BearerKey | int, body: bytes | None, expires_at: datetime
) -> tuple[ClassificationRequest, str] | RateLimited:
    """One transaction: admit the key's bearer, check the body, hold one credit
    that cannot be consumed after `expires_at` (the sweep refunds it then).

    A refusal for the body commits the key's use and nothing else; one for
    credits (or any error in the hold) rolls back everything.
    """
    with front.database.session() as session:
        if isinstance(payer, BearerKey):
            admitted = admission.admit(session, front, payer.authorization)
            if isinstance(admitted, RateLimited):
                return admitted
            account_id = admitted.account_id
        else:
            account_id = payer
        try:
            request = _parse(body, front.settings.max_body_bytes)
        except (BodyTooLarge, InvalidRequest) as refusal:
            bad_body = refusal
        else:
            return request, credits.hold(session, account_id, expires_at=expires_at).id
    raise bad_body


def _parse(body: bytes | None, max_body_bytes: int) -> ClassificationRequest:
    if body is None or len(body) > max_body_bytes:
        raise BodyTooLarge()
    return parse_classification_request(body)


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
    database): it then ends on its own."""
    return await to_thread.run_sync(
        _refund_quietly, database, reservation_id, abandon_on_cancel=True
    )


def _refund_quietly(database: Database, reservation_id: str) -> bool:
    """Refund a request that got no answer; a failure counts as not refunded
    (the sweep refunds it once its deadline has passed)."""
    try:
        return _refund(database, reservation_id, OUTCOME_FAILED)
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
            # Or consumed already: a settlement retried after its connection
            # broke (Database.autocommit) finds its own first run's charge.
            "answered but not charged by this settlement: reservation %s was refunded, "
            "is past its deadline or was consumed already",
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


def _consume(database: Database, reservation_id: str, found: bool) -> bool:
    return credits.consume_alone(database, reservation_id, OUTCOME_FOUND if found else OUTCOME_NOT_FOUND)


def _refund(database: Database, reservation_id: str, outcome: str) -> bool:
    with database.session() as session:
        return credits.refund(session, reservation_id, outcome)

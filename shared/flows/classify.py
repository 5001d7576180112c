"""Classify one product for one credit: admit, validate, reserve, dispatch, await; settle in the worker.

The front (`classify`) admits the caller, checks the request and reserves a
credit in one transaction, sends the work to the interactive queue by name
(all in one thread hop) and awaits the worker's answer; the
worker (`perform`) classifies and settles the credit. Every refund of a
synchronous credit is decided here: the worker refunds what it could not do,
the front refunds what got no answer, the sweep (`refund_unsettled`) what
nobody settled. Every call into `shared.credits` for it is in
`_admit_and_hold` and the last three functions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
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
from shared.flows import admission
from shared.flows.outcomes import Classified, Failed, Outcome, RateLimited, from_message
from shared.flows.ports import Front
from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE
from shared.validation import BodyTooLarge, InvalidRequest

logger = logging.getLogger(__name__)

# When the upstream AI says to wait but not for how long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0


class Classifier(Protocol):
    def classify(self, request: ClassificationRequest) -> ClassificationResult: ...


@dataclass(frozen=True, slots=True)
class BearerKey:
    """An API client's `Authorization` header: checked, and its account's limit counted,
    in the transaction that holds the credit."""

    authorization: str | None


async def classify(
    front: Front, payer: BearerKey | int, body: bytes | None, *, with_candidates: bool = False
) -> Outcome:
    """The outcome of the JSON request `body`, paid with one of the payer's credits.

    `payer` is an API key to admit, or the id of an account admitted already
    (the dashboard's session). `body` is None when the reader stopped at the
    size limit. Before anything is charged, in the contract's order:
    InvalidApiKey, RateLimited (returned), BodyTooLarge, InvalidRequest,
    InsufficientCredits.
    """
    reply_key = front.new_reply_key()
    # Registered before the work is sent, so that no reply can come first.
    front.replies.expect(reply_key)
    try:
        held = await to_thread.run_sync(
            _hold_and_send, front, payer, body, reply_key, with_candidates
        )
    except BaseException:
        front.replies.forget(reply_key)
        raise
    if isinstance(held, RateLimited):
        front.replies.forget(reply_key)
        return held
    return await _dispatch(front, held, reply_key)


@dataclass(frozen=True, slots=True)
class _Sent:
    """A held credit whose work went to the queue, or `error` if it could not."""

    reservation_id: str
    error: Exception | None = None


def _hold_and_send(
    front: Front, payer: BearerKey | int, body: bytes | None, reply_key: str, with_candidates: bool
) -> _Sent | RateLimited:
    """The front's whole synchronous part, in one thread: admit, check, hold, send."""
    held = _admit_and_hold(front, payer, body)
    if isinstance(held, RateLimited):
        return held
    request, reservation_id = held
    try:
        front.tasks.send_task(
            CLASSIFY_TASK,
            args=(request.to_dict(), reservation_id, reply_key, with_candidates),
            queue=INTERACTIVE_QUEUE,
            expires=front.settings.classify_timeout_seconds,
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
    front: Front, payer: BearerKey | int, body: bytes | None
) -> tuple[ClassificationRequest, str] | RateLimited:
    """One transaction: admit the key's bearer, check the body, hold one credit.

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
            expires_in = timedelta(seconds=front.settings.reservation_ttl_seconds)
            return request, credits.hold(session, account_id, expires_in=expires_in).id
    raise bad_body


def _parse(body: bytes | None, max_body_bytes: int) -> ClassificationRequest:
    if body is None or len(body) > max_body_bytes:
        raise BodyTooLarge()
    return parse_classification_request(body)


async def _dispatch(front: Front, sent: _Sent, reply_key: str) -> Outcome:
    """Await the outcome of the work sent.

    Whatever goes wrong on the way (the broker, a worker that never answers),
    the credit goes back; a worker that answers late finds it refunded and
    cannot consume it any more.
    """
    timeout = front.settings.classify_timeout_seconds
    try:
        if sent.error is not None:
            raise sent.error
        return from_message(await front.replies.wait(reply_key, timeout))
    except Exception:
        logger.exception("classification %s got no outcome; refunding", sent.reservation_id)
        front.replies.forget(reply_key)
        await to_thread.run_sync(_refund, front.database, sent.reservation_id, OUTCOME_FAILED)
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


def _consume(database: Database, reservation_id: str, found: bool) -> None:
    with database.session() as session:
        credits.consume(session, reservation_id, OUTCOME_FOUND if found else OUTCOME_NOT_FOUND)


def _refund(database: Database, reservation_id: str, outcome: str) -> None:
    with database.session() as session:
        credits.refund(session, reservation_id, outcome)

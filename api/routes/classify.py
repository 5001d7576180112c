"""POST /api/v1/products/categorize: checks in the contract's order, then the work.

Order: authentication (401), the account's rate limit (429), body size (413),
JSON and fields (400), credits (403), then the classification itself.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api import errors
from api.admission import admit
from api.body import BodyTooLarge, read_capped_body
from api.context import ApiContext
from shared.classification.models import ClassificationRequest, Outcome
from shared.classification.validation import parse_classification_request
from shared.credits import service as credits
from shared.credits.errors import InsufficientCredits
from shared.credits.models import OUTCOME_FAILED
from shared.validation import InvalidRequest
from worker.replies import new_reply_key
from worker.tasks import classify as classify_task

logger = logging.getLogger(__name__)


async def categorize(request: Request) -> Response:
    caller = await admit(request)
    if isinstance(caller, Response):
        return caller
    context = caller.context
    try:
        body = await read_capped_body(request, context.settings.max_body_bytes)
        classification = parse_classification_request(body)
    except BodyTooLarge:
        return errors.too_large()
    except InvalidRequest as exc:
        return errors.bad_request(str(exc))
    try:
        reservation_id = await run_in_threadpool(_reserve, context, caller.account.id)
    except InsufficientCredits:
        return errors.insufficient_credits()
    outcome = await run_classification(context, classification, reservation_id)
    return _respond(outcome)


def _reserve(context: ApiContext, account_id: int) -> str:
    with context.database.session() as session:
        ttl = timedelta(seconds=context.settings.reservation_ttl_seconds)
        return credits.hold(session, account_id, expires_in=ttl).id


def _refund(context: ApiContext, reservation_id: str) -> None:
    with context.database.session() as session:
        credits.refund(session, reservation_id, OUTCOME_FAILED)


async def run_classification(
    context: ApiContext, classification: ClassificationRequest, reservation_id: str
) -> Outcome:
    """Send the work to the interactive queue and await its outcome.

    Whatever goes wrong on the way (the broker, a worker that never answers),
    the credit goes back; a worker that answers late finds it refunded and
    cannot consume it any more.
    """
    timeout = context.settings.classify_timeout_seconds
    reply_key = new_reply_key(context.settings.redis_namespace)
    context.replies.expect(reply_key)
    try:
        await run_in_threadpool(
            classify_task.apply_async,
            args=(classification.to_dict(), reservation_id, reply_key),
            expires=timeout,
            # Flower and logs show this instead of the product text.
            argsrepr=f"(taxonomy={classification.taxonomy!r}, reservation={reservation_id!r})",
        )
        return Outcome.from_dict(await context.replies.wait(reply_key, timeout))
    except Exception:
        logger.exception("classification %s got no outcome; refunding", reservation_id)
        context.replies.forget(reply_key)
        await run_in_threadpool(_refund, context, reservation_id)
        return Outcome(status=500)


def _respond(outcome: Outcome) -> Response:
    if outcome.status == 200:
        return JSONResponse(outcome.body)
    if outcome.status == 429:
        return errors.rate_limited(outcome.retry_after or 1)
    return errors.internal_error()

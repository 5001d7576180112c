"""POST /api/v1/products/categorize: the classify use case, in HTTP.

Order: authentication (401), the account's rate limit (429), body size (413),
JSON and fields (400), credits (403), then the classification itself. The
body is read first, up to its limit, so that the use case decides all of
them in one transaction and one thread hop. All of it answers within
CLASSIFY_TIMEOUT_SECONDS, a stalled database included.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api import errors
from api.body import read_body_within
from api.context import ApiContext
from shared.accounts.errors import InvalidApiKey
from shared.credits.errors import InsufficientCredits
from shared.flows.classify import BearerKey, classify
from shared.flows.deadline import Deadline
from shared.flows.outcomes import Classified, Outcome, RateLimited
from shared.validation import BodyTooLarge, InvalidRequest

logger = logging.getLogger(__name__)


async def categorize(request: Request) -> Response:
    context: ApiContext = request.app.state.context
    deadline = Deadline.after(context.settings.classify_timeout_seconds)
    # A task rather than a cancel scope: a thread stuck in a stalled database
    # cannot be interrupted, and the answer must not wait for it. Cancelled,
    # the task ends when its thread does; a credit it held by then cannot be
    # consumed after the deadline and is refunded by the sweep.
    answering = asyncio.ensure_future(_categorize(request, context, deadline))
    await asyncio.wait({answering}, timeout=deadline.remaining())
    if answering.done():
        return answering.result()
    answering.cancel()
    answering.add_done_callback(_report_late_end)
    logger.error("no answer by the deadline (%g s): answering 500", deadline.seconds)
    return errors.internal_error()


def _report_late_end(answering: asyncio.Future) -> None:
    if not answering.cancelled() and answering.exception() is not None:
        logger.error("a request past its deadline ended with %r", answering.exception())


async def _categorize(request: Request, context: ApiContext, deadline: Deadline) -> Response:
    body = await read_body_within(request, context.settings.max_body_bytes)
    try:
        outcome = await classify(
            context, BearerKey(request.headers.get("authorization")), body, deadline=deadline
        )
    except InvalidApiKey:
        return errors.unauthorized()
    except BodyTooLarge:
        return errors.too_large()
    except InvalidRequest as exc:
        return errors.bad_request(str(exc))
    except InsufficientCredits:
        return errors.insufficient_credits()
    return _respond(outcome)


def _respond(outcome: Outcome) -> Response:
    if isinstance(outcome, Classified):
        return JSONResponse(outcome.response)
    if isinstance(outcome, RateLimited):
        return errors.rate_limited(outcome.retry_after)
    return errors.internal_error()

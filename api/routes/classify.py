"""POST /api/v1/products/categorize: the classify use case, in HTTP.

Order: authentication (401), the account's rate limit (429), body size (413),
JSON and fields (400), credits (403), then the classification itself.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api import errors
from api.admission import admit
from api.body import read_capped_body
from shared.credits.errors import InsufficientCredits
from shared.flows.classify import classify
from shared.flows.outcomes import Classified, Outcome, RateLimited
from shared.validation import BodyTooLarge, InvalidRequest


async def categorize(request: Request) -> Response:
    caller = await admit(request)
    if isinstance(caller, Response):
        return caller
    context = caller.context
    try:
        body = await read_capped_body(request, context.settings.max_body_bytes)
        outcome = await classify(context, caller.account.id, body)
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

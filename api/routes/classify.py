"""POST /api/v1/products/categorize: the classify use case, in HTTP.

Order: authentication (401), the account's rate limit (429), body size (413),
JSON and fields (400), credits (403), then the classification itself. The
body is read first, up to its limit, so that the use case decides all of
them in one transaction and one thread hop.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api import errors
from api.body import read_body_within
from api.context import ApiContext
from shared.accounts.errors import InvalidApiKey
from shared.credits.errors import InsufficientCredits
from shared.flows.classify import BearerKey, classify
from shared.flows.outcomes import Classified, Outcome, RateLimited
from shared.validation import BodyTooLarge, InvalidRequest


async def categorize(request: Request) -> Response:
    context: ApiContext = request.app.state.context
    body = await read_body_within(request, context.settings.max_body_bytes)
    try:
        outcome = await classify(context, BearerKey(request.headers.get("authorization")), body)
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

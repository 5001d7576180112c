"""The first two checks of every API route: who is calling (401), and may they now (429)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from api import errors
from api.context import ApiContext
from shared.accounts.errors import InvalidApiKey
from shared.flows.admission import admit_alone
from shared.flows.outcomes import RateLimited


@dataclass(frozen=True, slots=True)
class Caller:
    context: ApiContext
    account_id: int


async def admit(request: Request) -> Caller | Response:
    """The authenticated caller within its rate limit, or the 401 / 429 to answer."""
    context: ApiContext = request.app.state.context
    try:
        admitted = await run_in_threadpool(
            admit_alone, context, request.headers.get("authorization")
        )
    except InvalidApiKey:
        return errors.unauthorized()
    if isinstance(admitted, RateLimited):
        return errors.rate_limited(admitted.retry_after)
    return Caller(context, admitted.account_id)

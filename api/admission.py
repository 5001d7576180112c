"""The first two checks of every API route: who is calling (401), and may they now (429)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from api import errors
from api.context import ApiContext
from shared.accounts import service as accounts
from shared.accounts.errors import InvalidApiKey
from shared.accounts.models import Account


@dataclass(frozen=True, slots=True)
class Caller:
    context: ApiContext
    account: Account


async def admit(request: Request) -> Caller | Response:
    """The authenticated caller within its rate limit, or the 401 / 429 to answer."""
    context: ApiContext = request.app.state.context
    try:
        account = await run_in_threadpool(
            _authenticate, context, request.headers.get("authorization")
        )
    except InvalidApiKey:
        return errors.unauthorized()
    wait = await context.limiter.hit(
        account.id, accounts.rate_limits(account, context.default_limits)
    )
    if wait is not None:
        return errors.rate_limited(wait)
    return Caller(context, account)


def _authenticate(context: ApiContext, authorization: str | None) -> Account:
    with context.database.session() as session:
        account, key = accounts.authenticate(session, authorization)
        accounts.touch_key(session, key)
        return account

"""Who is signed in: the account id in Starlette's signed session cookie, checked server-side.

The cookie is signed, not encrypted: it holds only the account id, the
account's session generation and the CSRF token, nothing secret from its own
holder. Every request compares the generation with the account's row, so a
sign-out ends every cookie issued before it, a captured one included.
The cookie is Secure when the request came over https (as uvicorn reports
it: X-Forwarded-Proto counts only from TRUSTED_PROXIES).
"""

from __future__ import annotations

import functools
import logging
import secrets
from typing import Any, Awaitable, Callable

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from api.context import ApiContext
from shared.accounts import service as accounts
from shared.accounts.models import Account
from shared.settings import Settings

logger = logging.getLogger(__name__)

SESSION_COOKIE = "taxonomist_session"
SESSION_MAX_AGE_SECONDS = 14 * 24 * 60 * 60
ACCOUNT_ID = "account_id"
GENERATION = "generation"
SIGN_IN_PATH = "/dashboard/signin"
GENERATED_SECRET_BYTES = 32

Page = Callable[[Request, Account], Awaitable[Response]]


def session_middleware(settings: Settings) -> Middleware:
    return Middleware(
        SessionsBySchemeMiddleware,
        secret_key=_secret(settings),
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE_SECONDS,
        path="/dashboard",
        same_site="lax",
    )


class SessionsBySchemeMiddleware:
    """Starlette's SessionMiddleware, its cookie Secure on https requests only.

    Starlette fixes the flag per middleware; the same front serves plain
    http on loopback (tests, the embedded mode) and https behind a proxy.
    """

    def __init__(self, app: ASGIApp, /, **options: Any) -> None:
        self.plain = SessionMiddleware(app, https_only=False, **options)
        self.secure = SessionMiddleware(app, https_only=True, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope.get("scheme") in ("https", "wss") else self.plain
        await chosen(scope, receive, send)


def _secret(settings: Settings) -> str:
    secret = str(settings.secret_key)
    if secret:
        return secret
    logger.warning(
        "SECRET_KEY is not set: dashboard sessions use a random key and end when this process stops"
    )
    return secrets.token_urlsafe(GENERATED_SECRET_BYTES)


def sign_in(request: Request, account: Account) -> None:
    # A fresh session at sign-in: nothing chosen before it (a planted cookie) survives.
    request.session.clear()
    request.session[ACCOUNT_ID] = account.id
    request.session[GENERATION] = account.session_generation


async def sign_out(request: Request, account: Account) -> None:
    """End this session, and every other of the account (on every device) with it."""
    request.session.clear()
    await run_in_threadpool(_revoke, context_of(request), account.id)


def signed_in_account_id(request: Request) -> int | None:
    account_id = request.session.get(ACCOUNT_ID)
    return account_id if isinstance(account_id, int) else None


def signed_in(page: Page) -> Callable[[Request], Awaitable[Response]]:
    """Run `page` with the signed-in Account, or send the visitor to the sign-in page."""

    @functools.wraps(page)
    async def endpoint(request: Request) -> Response:
        account_id = signed_in_account_id(request)
        account = None
        if account_id is not None:
            account = await run_in_threadpool(_load_account, context_of(request), account_id)
        if account is None or request.session.get(GENERATION) != account.session_generation:
            request.session.clear()
            return RedirectResponse(SIGN_IN_PATH, status_code=303)
        return await page(request, account)

    return endpoint


def context_of(request: Request) -> ApiContext:
    return request.app.state.context


def _load_account(context: ApiContext, account_id: int) -> Account | None:
    with context.database.session() as session:
        return session.get(Account, account_id)


def _revoke(context: ApiContext, account_id: int) -> None:
    with context.database.session() as session:
        accounts.revoke_sessions(session, account_id)

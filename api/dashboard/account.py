"""Sign up, sign in, sign out."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, sign_in, sign_out
from shared.accounts import service as accounts
from shared.accounts.errors import AccountExists, AccountNotFound
from shared.accounts.passwords import check_password_rules, hash_password, verify_password
from shared.accounts.service import RateLimits
from shared.credits import service as credits
from shared.ratelimit.accounts import retry_after_header

OVERVIEW_PATH = "/dashboard"
MAX_EMAIL_LENGTH = 320
WRONG_CREDENTIALS = "The email or the password is wrong."
# Password guessing is slowed per email address, across every front.
SIGN_IN_LIMITS = RateLimits(per_minute=5, per_hour=20, per_day=50)
TOO_MANY_ATTEMPTS = "Too many sign-in attempts for this email. Try again in {seconds} seconds."


async def signup_page(request: Request) -> Response:
    return render(request, "signup.html", email="")


async def signup(request: Request) -> Response:
    email, password = await _credentials(request)
    try:
        _check_email(email)
        check_password_rules(password)
        account_id = await run_in_threadpool(_create_account, context_of(request), email, password)
    except (ValueError, AccountExists) as exc:
        return render(request, "signup.html", email=email, error=str(exc), status_code=400)
    return _enter(request, account_id)


async def signin_page(request: Request) -> Response:
    return render(request, "signin.html", email="")


async def signin(request: Request) -> Response:
    email, password = await _credentials(request)
    subject = f"signin:{accounts.normalise_email(email)}"
    wait = await context_of(request).limiter.hit(subject, SIGN_IN_LIMITS)
    if wait is not None:
        error = TOO_MANY_ATTEMPTS.format(seconds=retry_after_header(wait))
        return render(request, "signin.html", email=email, error=error, status_code=429)
    account_id = await run_in_threadpool(_check_credentials, context_of(request), email, password)
    if account_id is None:
        return render(request, "signin.html", email=email, error=WRONG_CREDENTIALS, status_code=400)
    return _enter(request, account_id)


async def signout(request: Request) -> Response:
    await checked_form(request)
    sign_out(request)
    return RedirectResponse(OVERVIEW_PATH, status_code=303)


async def _credentials(request: Request) -> tuple[str, str]:
    form = await checked_form(request)
    return str(form.get("email", "")).strip(), str(form.get("password", ""))


def _enter(request: Request, account_id: int) -> Response:
    sign_in(request, account_id)
    return RedirectResponse(OVERVIEW_PATH, status_code=303)


def _check_email(email: str) -> None:
    local, at, domain = email.partition("@")
    if not (local and at and "." in domain) or len(email) > MAX_EMAIL_LENGTH:
        raise ValueError("Enter an email address such as name@example.com.")


def _create_account(context: ApiContext, email: str, password: str) -> int:
    with context.database.session() as session:
        account = accounts.create_account(session, email, password_hash=hash_password(password))
        credits.open_balance(
            session, account.id, monthly_allowance=context.settings.default_monthly_credits
        )
        return account.id


def _check_credentials(context: ApiContext, email: str, password: str) -> int | None:
    with context.database.session() as session:
        try:
            account = accounts.get_account(session, email)
        except AccountNotFound:
            return None
        return account.id if verify_password(account.password_hash, password) else None

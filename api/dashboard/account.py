"""Sign up, sign in, sign out.

Neither form tells a visitor whether an email has an account: sign-up
answers the same either way (and sends everyone to the sign-in page), and
sign-in spends one argon2 verification whether or not the email exists.
Both are limited per client address as well as (sign-in) per email.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import SIGN_IN_PATH, context_of, sign_in, sign_out, signed_in
from shared.accounts import service as accounts
from shared.accounts.errors import AccountExists, AccountNotFound
from shared.accounts.models import Account
from shared.accounts.passwords import check_password_rules, hash_password, verify_password
from shared.accounts.service import RateLimits
from shared.credits import service as credits
from shared.ratelimit.accounts import retry_after_header

OVERVIEW_PATH = "/dashboard"
SIGNED_UP_PATH = f"{SIGN_IN_PATH}?signed-up"
MAX_EMAIL_LENGTH = 320
WRONG_CREDENTIALS = "The email or the password is wrong."
# Password guessing is slowed per email address, across every front.
SIGN_IN_LIMITS = RateLimits(per_minute=5, per_hour=20, per_day=50)
TOO_MANY_ATTEMPTS = "Too many sign-in attempts for this email. Try again in {seconds} seconds."
TOO_MANY_FROM_HERE = "Too many attempts from your address. Try again in {seconds} seconds."
SIGNED_UP = (
    "Your account is ready: sign in with the email and password you chose. "
    "If the email had an account already, nothing was changed: sign in with its password."
)


async def signup_page(request: Request) -> Response:
    return render(request, "signup.html", email="")


async def signup(request: Request) -> Response:
    email, password = await _credentials(request)
    try:
        _check_email(email)
        check_password_rules(password)
    except ValueError as exc:
        return render(request, "signup.html", email=email, error=str(exc), status_code=400)
    limits = RateLimits(*context_of(request).settings.signup_limits_per_address)
    wait = await _hit(request, f"signup:{_address(request)}", limits)
    if wait is not None:
        error = TOO_MANY_FROM_HERE.format(seconds=wait)
        return render(request, "signup.html", email=email, error=error, status_code=429)
    await run_in_threadpool(_create_account, context_of(request), email, password)
    return RedirectResponse(SIGNED_UP_PATH, status_code=303)


async def signin_page(request: Request) -> Response:
    notice = SIGNED_UP if "signed-up" in request.query_params else None
    return render(request, "signin.html", email="", notice=notice)


async def signin(request: Request) -> Response:
    email, password = await _credentials(request)
    context = context_of(request)
    per_address = RateLimits(*context.settings.signin_limits_per_address)
    checks = [
        # Per address: password spraying over many emails from one place.
        (f"signin-from:{_address(request)}", per_address, TOO_MANY_FROM_HERE),
        # Per email: guessing one account's password from many places.
        (f"signin:{accounts.normalise_email(email)}", SIGN_IN_LIMITS, TOO_MANY_ATTEMPTS),
    ]
    for subject, limits, message in checks:
        wait = await _hit(request, subject, limits)
        if wait is not None:
            error = message.format(seconds=wait)
            return render(request, "signin.html", email=email, error=error, status_code=429)
    account = await run_in_threadpool(_check_credentials, context, email, password)
    if account is None:
        return render(request, "signin.html", email=email, error=WRONG_CREDENTIALS, status_code=400)
    sign_in(request, account)
    return RedirectResponse(OVERVIEW_PATH, status_code=303)


@signed_in
async def signout(request: Request, account: Account) -> Response:
    await checked_form(request)
    await sign_out(request, account)
    return RedirectResponse(OVERVIEW_PATH, status_code=303)


async def _credentials(request: Request) -> tuple[str, str]:
    form = await checked_form(request)
    return str(form.get("email", "")).strip(), str(form.get("password", ""))


async def _hit(request: Request, subject: str, limits: RateLimits) -> str | None:
    """The seconds to wait as the Retry-After text, or None when within `limits`."""
    wait = await run_in_threadpool(context_of(request).limiter.hit, subject, limits)
    return None if wait is None else retry_after_header(wait)


def _address(request: Request) -> str:
    # uvicorn puts the X-Forwarded-For address here only for TRUSTED_PROXIES.
    return request.client.host if request.client else "unknown"


def _check_email(email: str) -> None:
    local, at, domain = email.partition("@")
    if not (local and at and "." in domain) or len(email) > MAX_EMAIL_LENGTH:
        raise ValueError("Enter an email address such as name@example.com.")


def _create_account(context: ApiContext, email: str, password: str) -> None:
    """Create the account; an existing one is left as it is, and nobody is told."""
    # Hashed first either way: the answer takes as long for a taken email.
    password_hash = hash_password(password)
    try:
        with context.database.session() as session:
            account = accounts.create_account(session, email, password_hash=password_hash)
            credits.open_balance(
                session, account.id, monthly_allowance=context.settings.default_monthly_credits
            )
    except AccountExists:
        pass


def _check_credentials(context: ApiContext, email: str, password: str) -> Account | None:
    with context.database.session() as session:
        try:
            account = accounts.get_account(session, email)
        except AccountNotFound:
            account = None
        # One verification whether or not the email has an account (a dummy hash
        # when not): the time taken does not tell which emails exist.
        matches = verify_password(account.password_hash if account else None, password)
        return account if account is not None and matches else None

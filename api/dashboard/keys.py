"""API keys: list, create (the full value shown once), delete after a confirmation page."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in
from shared.accounts import service as accounts
from shared.accounts.errors import KeyLimitReached, KeyNotFound
from shared.accounts.models import Account, ApiKey
from shared.db.base import MAX_INTEGER

KEYS_PATH = "/dashboard/keys"
# The page holding a new key's value must not be kept by the browser or a proxy.
NO_STORE = {"Cache-Control": "no-store"}
NO_SUCH_KEY = "No such active key on this account."


@signed_in
async def keys_page(request: Request, account: Account) -> Response:
    return await _render_keys(request, account)


@signed_in
async def create_key(request: Request, account: Account) -> Response:
    form = await checked_form(request)
    context = context_of(request)
    try:
        issued = await run_in_threadpool(_create, context, account, str(form.get("name", "")))
    except (ValueError, KeyLimitReached) as exc:
        return await _render_keys(request, account, error=str(exc), status_code=400)
    return await _render_keys(request, account, issued=issued, headers=NO_STORE)


@signed_in
async def confirm_delete_page(request: Request, account: Account) -> Response:
    key = await run_in_threadpool(_find, context_of(request), account, _key_id(request))
    return render(request, "key_delete.html", account=account, key=key)


@signed_in
async def delete_key(request: Request, account: Account) -> Response:
    await checked_form(request)
    try:
        await run_in_threadpool(_delete, context_of(request), account, _key_id(request))
    except KeyNotFound:
        raise HTTPException(404, NO_SUCH_KEY) from None
    return RedirectResponse(KEYS_PATH, status_code=303)


async def _render_keys(request: Request, account: Account, **values) -> Response:
    keys = await run_in_threadpool(_list, context_of(request), account.id)
    return render(
        request,
        "keys.html",
        account=account,
        keys=keys,
        max_keys=accounts.MAX_ACTIVE_KEYS,
        max_name_length=accounts.MAX_KEY_NAME_LENGTH,
        **values,
    )


def _key_id(request: Request) -> int:
    key_id = request.path_params["key_id"]
    if key_id > MAX_INTEGER:
        raise HTTPException(404, NO_SUCH_KEY)
    return key_id


def _list(context: ApiContext, account_id: int) -> list[ApiKey]:
    with context.database.session() as session:
        return accounts.active_keys(session, account_id)


def _create(context: ApiContext, account: Account, name: str) -> accounts.IssuedKey:
    with context.database.session() as session:
        return accounts.create_key(session, account, name, context.settings.support_email)


def _find(context: ApiContext, account: Account, key_id: int) -> ApiKey:
    for key in _list(context, account.id):
        if key.id == key_id:
            return key
    raise HTTPException(404, NO_SUCH_KEY)


def _delete(context: ApiContext, account: Account, key_id: int) -> None:
    with context.database.session() as session:
        accounts.delete_key(session, account, str(key_id))

"""CSRF protection for every dashboard form: a per-session token, checked on each POST.

A page puts the token in a hidden field; a cross-site form cannot read it.
The session cookie's SameSite=Lax is a second line, not the only one.
"""

from __future__ import annotations

import secrets

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request

from api.dashboard.forms import read_form

SESSION_KEY = "csrf_token"
FORM_FIELD = "csrf_token"
TOKEN_BYTES = 32
REFUSED = "The form has expired or did not come from this site. Go back, reload the page and try again."


def token(request: Request) -> str:
    """This session's token, created on first use."""
    value = request.session.get(SESSION_KEY)
    if not isinstance(value, str):
        value = secrets.token_urlsafe(TOKEN_BYTES)
        request.session[SESSION_KEY] = value
    return value


async def checked_form(request: Request, max_upload_bytes: int | None = None) -> FormData:
    """The submitted form (`read_form`), or HTTP 403 when its token is not this session's."""
    form = await read_form(request, max_upload_bytes)
    expected = request.session.get(SESSION_KEY)
    sent = form.get(FORM_FIELD)
    if not isinstance(expected, str) or not isinstance(sent, str):
        raise HTTPException(403, REFUSED)
    if not secrets.compare_digest(expected.encode(), sent.encode()):
        raise HTTPException(403, REFUSED)
    return form

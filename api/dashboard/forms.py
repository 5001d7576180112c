"""Reading a dashboard form: its size capped before anything is parsed, its text checked.

Starlette's own `request.form()` spools a multipart body of any size to
temporary files before a handler can look at it; here the body is read
through the same capped reader as the API's, and only then parsed. File
uploads are accepted only where a page asks for them (the jobs page, whose
handler runs once the visitor is known to be signed in).
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import Message

from api.body import BodyTooLarge, read_capped_body
from api.dashboard.sessions import context_of
from shared.classification.messages import TOO_LARGE
from shared.validation import InvalidRequest, check_text

URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
# A form holds at most a playground request (MAX_BODY_BYTES of text), which
# percent-encoding can triple, and a few short fields beside it.
FORM_EXPANSION = 4
# A multipart upload's boundaries, part headers and option fields.
UPLOAD_OVERHEAD_BYTES = 64 * 1024
WRONG_TYPE = "This form is sent as application/x-www-form-urlencoded."


async def read_form(request: Request, max_upload_bytes: int | None = None) -> FormData:
    """The form's fields (and, with `max_upload_bytes`, one file), or an HTTPException."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    uploads = max_upload_bytes is not None and media_type == MULTIPART
    if media_type not in ("", URLENCODED) and not uploads:
        raise HTTPException(415, WRONG_TYPE)
    limit = (
        max_upload_bytes + UPLOAD_OVERHEAD_BYTES
        if max_upload_bytes is not None and uploads
        else FORM_EXPANSION * context_of(request).settings.max_body_bytes
    )
    try:
        body = await read_capped_body(request, limit)
    except BodyTooLarge:
        raise HTTPException(413, TOO_LARGE) from None
    form = await Request(request.scope, _replay(body)).form(max_files=1 if uploads else 0)
    try:
        for name, value in form.multi_items():
            if isinstance(value, str):
                check_text(f"Field {name!r}", value)
    except InvalidRequest as exc:
        raise HTTPException(400, str(exc)) from None
    return form


def _replay(body: bytes):
    """An ASGI receive that hands the already-read body to the form parser."""

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive

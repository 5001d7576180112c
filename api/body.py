"""Reading a request body without ever holding more than the allowed size."""

from __future__ import annotations

from starlette.requests import Request

from shared.validation import BodyTooLarge


async def read_capped_body(request: Request, max_bytes: int) -> bytes:
    """The body, or BodyTooLarge as soon as it is known to exceed `max_bytes`.

    A declared Content-Length decides before anything is read; a body sent
    without one (chunked) is cut off once the limit is crossed.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


async def read_body_within(request: Request, max_bytes: int) -> bytes | None:
    """The body, or None once it is known to exceed `max_bytes` (the 413 is decided later)."""
    try:
        return await read_capped_body(request, max_bytes)
    except BodyTooLarge:
        return None

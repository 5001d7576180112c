"""The plain-text error answers of the contract (section 7)."""

from __future__ import annotations

from starlette.responses import PlainTextResponse

from shared.classification.messages import (  # noqa: F401  (re-exported for callers)
    BAD_JSON,
    INSUFFICIENT_CREDITS,
    INTERNAL_ERROR,
    RATE_LIMITED,
    TOO_LARGE,
    UNAUTHORIZED,
)
from shared.ratelimit.accounts import retry_after_header


def plain(status: int, message: str, headers: dict | None = None) -> PlainTextResponse:
    # PlainTextResponse sends `text/plain; charset=utf-8`, as every non-200 must be.
    return PlainTextResponse(message, status_code=status, headers=headers)


def bad_request(message: str) -> PlainTextResponse:
    return plain(400, message)


def unauthorized() -> PlainTextResponse:
    return plain(401, UNAUTHORIZED)


def insufficient_credits() -> PlainTextResponse:
    return plain(403, INSUFFICIENT_CREDITS)


def too_large() -> PlainTextResponse:
    return plain(413, TOO_LARGE)


def rate_limited(wait_seconds: float) -> PlainTextResponse:
    return plain(429, RATE_LIMITED, {"Retry-After": retry_after_header(wait_seconds)})


def internal_error() -> PlainTextResponse:
    # After an unhandled error the server drops the connection: saying so
    # keeps a client from sending its next request down a closed socket.
    return plain(500, INTERNAL_ERROR, {"Connection": "close"})

"""Liveness (/healthz) and readiness (/readyz: database and its schema, broker, taxonomies)."""

from __future__ import annotations

import asyncio
from typing import Callable

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from api.context import ApiContext
from shared.db.migrate import schema_is_current

# A stalled database or broker makes the probe answer "not ready" in time,
# rather than hang as long as the stall lasts.
READINESS_TIMEOUT_SECONDS = 2.0


async def healthz(_request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    context: ApiContext = request.app.state.context
    schema, broker = await asyncio.gather(
        _within_timeout(_schema_state, context), _within_timeout(_broker_ok, context)
    )
    checks = {
        "database": schema is not None,
        "schema": bool(schema),
        "broker": bool(broker),
        "taxonomies": bool(context.taxonomy_versions),
    }
    ready = all(checks.values())
    return JSONResponse(
        {
            "status": "ready" if ready else "not ready",
            "checks": checks,
            "taxonomyVersions": context.taxonomy_versions,
        },
        status_code=200 if ready else 503,
    )


async def _within_timeout(check: Callable, *args) -> bool | None:
    """The check's answer, or None when it did not answer in time.

    The thread of a check that hangs is abandoned, not waited for: it ends
    when its socket does.
    """
    with anyio.move_on_after(READINESS_TIMEOUT_SECONDS):
        return await anyio.to_thread.run_sync(check, *args, abandon_on_cancel=True)
    return None


def _schema_state(context: ApiContext) -> bool | None:
    """Whether the schema is current; None when the database does not answer."""
    try:
        return schema_is_current(context.database.engine)
    except Exception:
        return None


def _broker_ok(context: ApiContext) -> bool:
    try:
        with context.tasks.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:
        return False

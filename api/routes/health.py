"""Liveness (/healthz) and readiness (/readyz: database, broker, taxonomies)."""

from __future__ import annotations

from sqlalchemy import text
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from api.context import ApiContext


async def healthz(_request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    context: ApiContext = request.app.state.context
    checks = {
        "database": await run_in_threadpool(_database_ok, context),
        "broker": await run_in_threadpool(_broker_ok, context),
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


def _database_ok(context: ApiContext) -> bool:
    try:
        with context.database.session() as session:
            session.execute(text("SELECT 1"))
        return True
    except Exception:
        return False


def _broker_ok(context: ApiContext) -> bool:
    try:
        with context.tasks.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:
        return False

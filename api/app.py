"""The Starlette front: routes, the lifespan that opens what they share, error handling."""

from __future__ import annotations

import contextlib
import logging

from anyio import to_thread
from celery import Celery
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from api import errors
from api.context import ApiContext
from api.dashboard.routes import dashboard_mount
from api.routes.classify import categorize
from api.routes.health import healthz, readyz
from api.routes.jobs import ROUTES as JOB_ROUTES
from shared.classification.models import TAXONOMY_NAMES
from shared.db.session import Database
from shared.ratelimit.accounts import InProcessAccountLimiter, RedisAccountLimiter
from shared.redis_pool import RedisPoolLimits
from shared.settings import Settings
from shared.taxonomy.files import load_taxonomy
from worker.replies import InProcessReplies, RedisReplies, make_replies

logger = logging.getLogger(__name__)


def taxonomy_versions(settings: Settings) -> dict[str, str]:
    taxonomy_dir = settings.require_taxonomy_dir()
    return {name: load_taxonomy(taxonomy_dir, name).version for name in TAXONOMY_NAMES}


def build_context(
    settings: Settings, tasks: Celery, replies: RedisReplies | InProcessReplies | None = None
) -> ApiContext:
    redis_url = settings.shared_redis_url
    redis_pool = RedisPoolLimits.of(settings)
    return ApiContext(
        settings=settings,
        database=Database.of(settings),
        limiter=(
            RedisAccountLimiter(redis_url, settings.redis_namespace, redis_pool)
            if redis_url
            else InProcessAccountLimiter()
        ),
        replies=replies or make_replies(redis_url, settings.redis_namespace),
        taxonomy_versions=taxonomy_versions(settings),
        tasks=tasks,
    )


async def _internal_error(_request: Request, exc: Exception):
    logger.error("unhandled error: %s", type(exc).__name__, exc_info=exc)
    return errors.internal_error()


def create_app(context: ApiContext) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        app.state.context = context
        # The front's blocking work (nearly all of it in a database transaction)
        # runs on as many threads as the pool keeps connections: more threads
        # opened and closed an overflow connection per request under load.
        to_thread.current_default_thread_limiter().total_tokens = (
            context.settings.database_pool_size
        )
        yield
        await context.close()

    return Starlette(
        routes=[
            Route("/api/v1/products/categorize", categorize, methods=["POST"]),
            *JOB_ROUTES,
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            dashboard_mount(context.settings),
        ],
        exception_handlers={Exception: _internal_error},
        lifespan=lifespan,
    )

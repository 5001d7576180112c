"""The front's process: the Starlette app on uvicorn (`taxonomist serve`, wired in cli/serve.py)."""

from __future__ import annotations

import logging
import sys
from typing import Callable

import uvicorn

from shared.settings import ConfigurationError, Settings
from shared.taxonomy.errors import TaxonomyError
from worker.celery_app import TaxonomistCelery, make_celery
from worker.replies import InProcessReplies

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Starts the worker inside this process (the embedded mode) with the Celery app
# it is given, and returns the channel it answers on.
EmbeddedWorkerStarter = Callable[[TaxonomistCelery], InProcessReplies]


def run(args, start_embedded_worker: EmbeddedWorkerStarter) -> int:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    try:
        settings = Settings.from_environ()
        app = (
            build_app(settings, start_embedded_worker)
            if args.workers == 1
            else prepare_fronts(settings, args.workers)
        )
    except (ConfigurationError, TaxonomyError) as exc:
        print(f"taxonomist serve: {exc}", file=sys.stderr)
        return 2
    uvicorn.run(
        app,
        factory=args.workers > 1,
        workers=args.workers,
        host=args.host,
        port=args.port,
        log_level="info",
        timeout_keep_alive=args.timeout_keep_alive,
        # uvloop (a dependency) costs the front less CPU per request than
        # asyncio's loop; "auto" still starts in an environment installed
        # before it was one. h11, not httptools even when installed: h11 caps
        # a request's head at 16 KiB, httptools accepts any size
        # (docs/throughput.md).
        loop="auto",
        http="h11",
        # The scheme and client address come from X-Forwarded-* of these proxies
        # only; with none, a header cannot make a request look https or local.
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=settings.trusted_proxies or None,
    )
    return 0


def build_app(settings: Settings, start_embedded_worker: EmbeddedWorkerStarter):
    from api.app import build_context, create_app
    from shared.db.migrate import open_database

    open_database(settings.database_url).dispose()
    tasks = make_celery(settings)
    replies = None
    if settings.embedded:
        replies = start_embedded_worker(tasks)
    return create_app(build_context(settings, tasks, replies))


def prepare_fronts(settings: Settings, processes: int) -> str:
    """Check and migrate once, before uvicorn starts the front processes; their app factory."""
    from api.app import taxonomy_versions
    from shared.db.migrate import open_database

    if processes < 1:
        raise ConfigurationError("--workers must be at least 1.")
    if settings.embedded:
        raise ConfigurationError(
            "--workers needs the production mode (CELERY_BROKER_URL): the embedded "
            "worker, its replies and its rate limits live in a single process."
        )
    taxonomy_versions(settings)
    open_database(settings.database_url).dispose()
    return f"{__name__}:front_app"


def front_app():
    """The app of one of several front processes (uvicorn calls it in each)."""
    from api.app import build_context, create_app

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = Settings.from_environ()
    return create_app(build_context(settings, make_celery(settings)))

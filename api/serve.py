"""`taxonomist serve`: the front, and in the embedded mode the worker too."""

from __future__ import annotations

import logging
import sys

import uvicorn

from shared.settings import ConfigurationError, Settings
from shared.taxonomy.errors import TaxonomyError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_FRONT_PROCESSES = 1
# uvicorn's own default: an idle keep-alive connection is closed after this long.
DEFAULT_KEEP_ALIVE_SECONDS = 5
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def register(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the service")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_FRONT_PROCESSES,
        help="front processes sharing the port (production mode only)",
    )
    parser.add_argument(
        "--timeout-keep-alive",
        type=int,
        default=DEFAULT_KEEP_ALIVE_SECONDS,
        help="seconds an idle keep-alive connection stays open",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    try:
        settings = Settings.from_environ()
        app = build_app(settings) if args.workers == 1 else prepare_fronts(settings, args.workers)
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
        # The scheme and client address come from X-Forwarded-* of these proxies
        # only; with none, a header cannot make a request look https or local.
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=settings.trusted_proxies or None,
    )
    return 0


def build_app(settings: Settings):
    from api.app import build_context, create_app
    from shared.db.migrate import open_database

    open_database(settings.database_url).dispose()
    replies = None
    if settings.embedded:
        replies = _start_embedded_worker(settings)
    return create_app(build_context(settings, replies))


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
    return create_app(build_context(Settings.from_environ()))


def _start_embedded_worker(settings: Settings):
    from worker import runtime
    from worker.celery_app import app as celery_app
    from worker.embedded import start_embedded_worker
    from worker.replies import InProcessReplies

    replies = InProcessReplies()
    runtime.install(runtime.WorkerRuntime.build(settings, replies))
    start_embedded_worker(celery_app)
    return replies

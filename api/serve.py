"""`taxonomist serve`: the front, and in the embedded mode the worker too."""

from __future__ import annotations

import logging
import sys

import uvicorn

from shared.settings import ConfigurationError, Settings
from shared.taxonomy.errors import TaxonomyError
from worker.celery_app import TaxonomistCelery, make_celery

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the service")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.set_defaults(func=run)


def run(args) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings.from_environ()
        app = build_app(settings)
    except (ConfigurationError, TaxonomyError) as exc:
        print(f"taxonomist serve: {exc}", file=sys.stderr)
        return 2
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="info",
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
    tasks = make_celery(settings)
    replies = None
    if settings.embedded:
        replies = _start_embedded_worker(tasks)
    return create_app(build_context(settings, tasks, replies))


def _start_embedded_worker(tasks: TaxonomistCelery):
    """The worker and the periodic work, in threads of this process."""
    from worker import runtime
    from worker.embedded import start_embedded_worker
    from worker.periodic import start_embedded_timer
    from worker.replies import InProcessReplies

    replies = InProcessReplies()
    worker_runtime = runtime.WorkerRuntime.build(tasks.settings, replies)
    runtime.install(worker_runtime)
    start_embedded_worker(tasks)
    start_embedded_timer(tasks, worker_runtime.database)
    return replies

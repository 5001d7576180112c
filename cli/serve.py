"""`taxonomist serve`: the front, and in the embedded mode the worker in the same process."""

from __future__ import annotations

from api import serve as front
from worker.celery_app import TaxonomistCelery
from worker.replies import InProcessReplies

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_FRONT_PROCESSES = 1
# uvicorn's own default: an idle keep-alive connection is closed after this long.
DEFAULT_KEEP_ALIVE_SECONDS = 5


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
    return front.run(args, _start_embedded_worker)


def _start_embedded_worker(tasks: TaxonomistCelery) -> InProcessReplies:
    # Imported only in the embedded mode: the worker's classifier loads the
    # ML stack, which a production front never needs (bench/front_memory.py).
    from worker.embedded import start_in_process

    return start_in_process(tasks)

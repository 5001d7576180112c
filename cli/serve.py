"""`taxonomist serve`: the front, and in the embedded mode the worker in the same process."""

from __future__ import annotations

from api import serve as front
from worker.celery_app import TaxonomistCelery
from worker.replies import InProcessReplies

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the service")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.set_defaults(func=run)


def run(args) -> int:
    return front.run(args, _start_embedded_worker)


def _start_embedded_worker(tasks: TaxonomistCelery) -> InProcessReplies:
    # Imported only in the embedded mode: the worker's classifier loads the
    # ML stack, which a production front never needs (bench/front_memory.py).
    from worker.embedded import start_in_process

    return start_in_process(tasks)

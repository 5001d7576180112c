"""`taxonomist worker` and `taxonomist beat`: a Celery worker, and the fleet's one scheduler.

Options they do not know themselves (`-n name@%h`, `--pool`, ...) go on to Celery.
"""

from __future__ import annotations

from shared.flows.queue import BULK_QUEUE, INTERACTIVE_QUEUE
from shared.settings import Settings
from worker.celery_app import make_celery


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="run a Celery worker (same as `celery -A worker.celery_app worker`)",
        allow_abbrev=False,
    )
    parser.add_argument("--concurrency", "-c", type=int, default=None, help="pool processes")
    parser.add_argument(
        "--queues",
        "-Q",
        default=f"{INTERACTIVE_QUEUE},{BULK_QUEUE}",
        help="comma-separated queues (a dedicated interactive worker: -Q interactive)",
    )
    parser.add_argument("--loglevel", "-l", default="INFO")
    parser.set_defaults(func=run, passes_unknown_options=True)

    beat = subparsers.add_parser(
        "beat",
        help="send the periodic tasks (sweeps) on their schedule; run exactly one per deployment",
        allow_abbrev=False,
    )
    beat.add_argument("--loglevel", "-l", default="INFO")
    beat.set_defaults(func=run_beat, passes_unknown_options=True)


def run(args) -> int:
    argv = ["worker", "--loglevel", args.loglevel, "--queues", args.queues]
    if args.concurrency:
        argv += ["--concurrency", str(args.concurrency)]
    make_celery(Settings.from_environ()).worker_main(argv + args.unknown_options)
    return 0


def run_beat(args) -> int:
    argv = ["beat", "--loglevel", args.loglevel]
    make_celery(Settings.from_environ()).start(argv + args.unknown_options)
    return 0


"""`taxonomist worker`: a Celery worker for the production mode.

Options it does not know itself (`-n name@%h`, `--pool`, ...) go on to Celery.
"""

from __future__ import annotations

from shared.flows.queue import BULK_QUEUE, INTERACTIVE_QUEUE


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


def run(args) -> int:
    from worker.celery_app import app

    argv = ["worker", "--loglevel", args.loglevel, "--queues", args.queues]
    if args.concurrency:
        argv += ["--concurrency", str(args.concurrency)]
    app.worker_main(argv + args.unknown_options)
    return 0

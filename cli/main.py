"""The `taxonomist` command line.

Each command lives in a module that exposes `register(subparsers)`: the
commands that compose entry points or use cases live in this package, those
of a single domain in that domain's package; this module only assembles them.
"""

from __future__ import annotations

import argparse
import sys

import shared.accounts.cli
import shared.ai.fake_upstream
import shared.credits.cli
import shared.evaluation.cli
import shared.taxonomy.fetch
import worker.cli
from cli import jobs, serve

COMMAND_MODULES = (
    serve,
    worker.cli,
    shared.accounts.cli,
    shared.credits.cli,
    jobs,
    shared.taxonomy.fetch,
    shared.evaluation.cli,
    shared.ai.fake_upstream,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taxonomist", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    # A command that wraps another program (the worker: Celery) passes on what it does not know.
    if unknown and not getattr(args, "passes_unknown_options", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.unknown_options = unknown
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())

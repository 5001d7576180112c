"""The `taxonomist` command line.

Each command lives in the module of its domain, which exposes
`register(subparsers)`; this module only assembles them.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = (
    "api.serve",
    "worker.cli",
    "shared.accounts.cli",
    "shared.credits.cli",
    "shared.jobs.cli",
    "shared.taxonomy.fetch",
    "shared.evaluation.cli",
    "shared.ai.fake_upstream",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taxonomist", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
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

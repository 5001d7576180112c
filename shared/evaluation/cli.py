"""`taxonomist eval FILE.jsonl`: accuracy and speed of the pipeline on labelled listings.

Runs the same Classifier the service runs, in-process, with the selector
AI_PROVIDER names (the local one by default: then no network at all); no
HTTP, no credits. One report per taxonomy; with
--json the report's figures also follow as one JSON line per taxonomy
(Google first, then Shopify), so the last line is the last taxonomy's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import ContextManager, TextIO

from shared.ai.errors import AIError
from shared.ai.service import build_selector
from shared.classification.models import TAXONOMY_NAMES
from shared.evaluation.metrics import summarize
from shared.evaluation.runner import EvaluationFileError, read_items, run
from shared.ratelimit.concurrency import make_call_slots
from shared.settings import ConfigurationError, Settings
from shared.taxonomy.errors import TaxonomyError

EXIT_OK = 0
# --strict: the report was printed, and some items failed.
EXIT_FAILED_ITEMS = 1
EXIT_ERROR = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure accuracy of the local pipeline on a labelled JSON-lines file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", type=Path, help='JSON lines {"product", "taxonomy", "categoryId"}')
    parser.add_argument("--taxonomy", choices=TAXONOMY_NAMES, help="only items of this taxonomy")
    parser.add_argument("--limit", type=int, help="only the first N items (after --taxonomy)")
    parser.add_argument("--json", action="store_true", help="end with the figures as JSON lines")
    parser.add_argument(
        "--no-fallback",
        dest="fallback",
        action="store_false",
        help="measure with fallbackToBestGuess off (default: on, as the goals are stated)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"exit {EXIT_FAILED_ITEMS} when an item failed (default: count it and go on)",
    )
    parser.add_argument(
        "--details",
        type=Path,
        metavar="FILE",
        help="write one JSON line per item: answer, label, top candidates, decided or fallback",
    )
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    # Here, not at the top: `taxonomist` assembles every command, and the
    # others (the front's `serve` above all) must not load the ML stack.
    from shared.classification.service import Classifier
    from shared.taxonomy.service import load_index

    try:
        settings = Settings.from_environ()
        taxonomy_dir = settings.require_taxonomy_dir()
        items = read_items(args.file)
        if args.taxonomy:
            items = [item for item in items if item.taxonomy == args.taxonomy]
        if args.limit is not None:
            items = items[: args.limit]
        names = [name for name in TAXONOMY_NAMES if any(i.taxonomy == name for i in items)]
        unknown = {item.taxonomy for item in items} - set(TAXONOMY_NAMES)
        if unknown:
            raise EvaluationFileError(f"Unknown taxonomy in {args.file}: {sorted(unknown)}")
        indexes = {
            name: load_index(taxonomy_dir, name, settings.index_cache_dir()) for name in names
        }
        selector = build_selector(settings, make_call_slots(settings))
        classifier = Classifier(indexes, selector, settings.candidate_count)
        summaries = []
        with _details_file(args.details) as details:
            for name in names:
                outcomes = run(
                    classifier,
                    [i for i in items if i.taxonomy == name],
                    fallback=args.fallback,
                    details=details,
                )
                summaries.append(summarize(outcomes, indexes[name].taxonomy.version))
    except (ConfigurationError, TaxonomyError, EvaluationFileError, AIError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for name, summary in zip(names, summaries):
        print(format_report(name, summary, fallback=args.fallback))
    if args.json:
        for summary in summaries:
            print(json.dumps(summary))
    if args.strict and any(summary["failed"] for summary in summaries):
        return EXIT_FAILED_ITEMS
    return EXIT_OK


def _details_file(path: Path | None) -> ContextManager[TextIO | None]:
    if path is None:
        return contextlib.nullcontext()
    try:
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise EvaluationFileError(f"Cannot write {path}: {exc}") from exc


def format_report(name: str, summary: dict, *, fallback: bool) -> str:
    s = summary
    return "\n".join(
        [
            f"{name} (taxonomy version {s['taxonomyVersion']}), "
            f"fallbackToBestGuess {'on' if fallback else 'off'}",
            f"  items                    {s['count']}",
            f"  candidate recall @1/5/15 {s['recall@1']:.3f} / {s['recall@5']:.3f} / {s['recall@15']:.3f}",
            f"  accuracy (exact id)      {s['accuracy']:.3f}",
            f"  coverage                 {s['coverage']:.3f}",
            f"  accuracy among found     {s['accuracyFound']:.3f}",
            f"  decided (no fallback)    {s['decided']:.3f}, exact {s['precisionDecided']:.3f}, "
            f"top-level {s['topLevelPrecisionDecided']:.3f}",
            f"  declined / fallback / failed  {s['declined']} / {s['fallback']} / {s['failed']} items",
            f"  answers invalid / cut off     {s['invalidAnswers']} / {s['truncatedAnswers']}",
            f"  tokens per item          {s['promptTokensPerItem']:.1f} prompt, "
            f"{s['completionTokensPerItem']:.1f} completion",
            f"  path-consistent accuracy {s['pathConsistentAccuracy']:.3f}",
            f"  top-level accuracy       {s['topLevelAccuracy']:.3f}",
            f"  time per item p50 / p95  {s['p50Ms']:.2f} ms / {s['p95Ms']:.2f} ms",
        ]
    )

"""Run the real pipeline in-process over labelled listings."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Iterable, TextIO

from shared.ai.errors import AIError
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_NONE,
    ClassificationRequest,
    ClassificationResult,
)
from shared.evaluation.metrics import Outcome

if TYPE_CHECKING:
    # Only a type here: reading the items needs no index (the command line loads this module).
    from shared.classification.service import Classifier


class EvaluationFileError(Exception):
    """The labelled file cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class LabelledItem:
    product: str
    taxonomy: str
    category_id: str


def read_items(path: Path) -> list[LabelledItem]:
    """Items of a JSON-lines file of {"product", "taxonomy", "categoryId"} objects."""
    items = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationFileError(f"Cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            items.append(
                LabelledItem(data["product"], data["taxonomy"], str(data["categoryId"]))
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise EvaluationFileError(f"{path}:{number}: not a labelled item ({exc})") from exc
    return items


def run(
    classifier: Classifier,
    items: Iterable[LabelledItem],
    *,
    fallback: bool,
    details: TextIO | None = None,
) -> list[Outcome]:
    """Classify each item and record its outcome; items with unknown labels are errors.

    An item the selector fails on (AIError: a timeout after the retries...)
    is recorded as failed, without an answer, and the run goes on.
    With `details`, one JSON line per item is written there (see detail_line).
    """
    outcomes: list[Outcome] = []
    for item in items:
        taxonomy = classifier.indexes[item.taxonomy].taxonomy
        label = taxonomy.get(item.category_id)
        if label is None:
            raise EvaluationFileError(
                f"Label {item.category_id!r} is not a {item.taxonomy} category "
                f"(taxonomy version {taxonomy.version})."
            )
        request = ClassificationRequest(
            product=item.product, taxonomy=item.taxonomy, fallback_to_best_guess=fallback
        )
        started = time.perf_counter()
        candidates = classifier.candidates(request)
        failed = False
        try:
            result = classifier.decide(request, candidates)
        except AIError as exc:
            print(f"item {len(outcomes) + 1} failed: {exc}", file=sys.stderr)
            failed = True
            result = ClassificationResult(None, CONFIDENCE_NONE, candidates)
        elapsed = (time.perf_counter() - started) * 1000
        outcome = Outcome(
            label=label,
            answer=result.category,
            candidate_ids=[c.category.id for c in candidates],
            milliseconds=elapsed,
            decided=result.confidence == CONFIDENCE_AI,
            failed=failed,
            invalid_answer=result.invalid_answer,
            truncated_answer=result.truncated_answer,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
        )
        outcomes.append(outcome)
        if details is not None:
            details.write(json.dumps(detail_line(item, outcome, result), ensure_ascii=False) + "\n")
    return outcomes


def detail_line(item: LabelledItem, outcome: Outcome, result: ClassificationResult) -> dict:
    """What --details writes for one item: the answer, the label, how it was reached."""
    answer = outcome.answer
    return {
        "product": item.product,
        "taxonomy": item.taxonomy,
        "label": {"id": outcome.label.id, "path": outcome.label.path},
        "answer": {"id": answer.id, "path": answer.path} if answer else None,
        "correct": answer is not None and answer.id == outcome.label.id,
        "decided": outcome.decided,
        "fallback": answer is not None and not outcome.decided,
        "failed": outcome.failed,
        "labelRank": (
            outcome.candidate_ids.index(outcome.label.id) + 1
            if outcome.label.id in outcome.candidate_ids
            else None
        ),
        "candidates": [
            {
                "id": c.category.id,
                "path": c.category.path,
                "score": round(c.score, 6),
                "support": c.support,
                "votes": c.votes,
            }
            for c in result.candidates
        ],
    }

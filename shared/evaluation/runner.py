"""Run the real pipeline in-process over labelled listings."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from shared.classification.models import ClassificationRequest
from shared.classification.service import Classifier
from shared.evaluation.metrics import Outcome


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
    classifier: Classifier, items: Iterable[LabelledItem], *, fallback: bool
) -> list[Outcome]:
    """Classify each item and record its outcome; items with unknown labels are errors."""
    outcomes = []
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
        result = classifier.classify(request)
        elapsed = (time.perf_counter() - started) * 1000
        outcomes.append(
            Outcome(
                label=label,
                answer=result.category,
                candidate_ids=[c.category.id for c in result.candidates],
                milliseconds=elapsed,
            )
        )
    return outcomes

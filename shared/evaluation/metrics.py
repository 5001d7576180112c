"""Per-item outcomes and the summary figures computed from them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

from shared.taxonomy.models import Category

RECALL_DEPTHS = (1, 5, 15)


@dataclass(frozen=True)
class Outcome:
    """What the pipeline did with one labelled listing."""

    label: Category
    answer: Category | None
    candidate_ids: list[str]
    milliseconds: float
    # The selector chose the answer itself (not the fallback to the best candidate).
    decided: bool = False
    # The selector raised (AIError): no answer, and the run went on.
    failed: bool = False
    # Its answer was neither a candidate nor a decline / was cut off.
    invalid_answer: bool = False
    truncated_answer: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


def is_path_consistent(answer: Category, label: Category) -> bool:
    """The answer is the label, one of its ancestors, or one of its descendants."""
    return answer.in_line_with(label)


def summarize(outcomes: Sequence[Outcome], taxonomy_version: str) -> dict:
    """The figures of the eval report, under the keys of its JSON line."""
    count = len(outcomes)
    # (answer, label) of the outcomes with an answer, and of those the selector decided.
    found = [(o.answer, o.label) for o in outcomes if o.answer is not None]
    decided = [(o.answer, o.label) for o in outcomes if o.answer is not None and o.decided]
    exact = sum(answer.id == label.id for answer, label in found)
    summary: dict = {"count": count}
    for depth in RECALL_DEPTHS:
        hits = sum(o.label.id in o.candidate_ids[:depth] for o in outcomes)
        summary[f"recall@{depth}"] = _share(hits, count)
    times = [o.milliseconds for o in outcomes]
    summary.update(
        {
            "accuracy": _share(exact, count),
            "coverage": _share(len(found), count),
            "accuracyFound": _share(exact, len(found)),
            "pathConsistentAccuracy": _share(
                sum(is_path_consistent(answer, label) for answer, label in found), count
            ),
            "topLevelAccuracy": _share(
                sum(answer.tags[0] == label.tags[0] for answer, label in found), count
            ),
            "decided": _share(len(decided), count),
            "precisionDecided": _share(
                sum(answer.id == label.id for answer, label in decided), len(decided)
            ),
            "topLevelPrecisionDecided": _share(
                sum(answer.tags[0] == label.tags[0] for answer, label in decided), len(decided)
            ),
            # Counts of items: how the selector's answers went.
            "declined": sum(
                not (o.decided or o.failed or o.invalid_answer) for o in outcomes
            ),
            "fallback": sum(o.answer is not None and not o.decided for o in outcomes),
            "invalidAnswers": sum(o.invalid_answer for o in outcomes),
            "truncatedAnswers": sum(o.truncated_answer for o in outcomes),
            "failed": sum(o.failed for o in outcomes),
            "promptTokensPerItem": _mean(o.prompt_tokens for o in outcomes),
            "completionTokensPerItem": _mean(o.completion_tokens for o in outcomes),
            "p50Ms": round(percentile(times, 50), 3) if times else 0.0,
            "p95Ms": round(percentile(times, 95), 3) if times else 0.0,
            "taxonomyVersion": taxonomy_version,
        }
    )
    return summary


def _mean(values: Iterable[int]) -> float:
    values = list(values)
    return round(statistics.fmean(values), 1) if values else 0.0


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def percentile(values: Sequence[float], percent: int) -> float:
    """The `percent`th percentile (1-99) of a non-empty sample, interpolated
    between its nearest values (`statistics.quantiles`, inclusive method: 50 is the median)."""
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]

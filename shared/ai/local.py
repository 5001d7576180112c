"""The offline selector: accept the best candidate only when the evidence agrees on it.

It asks no model. Its confidence comes from the candidate generator's own
signals: the best candidate must be favoured (it or a relative) by at least
MIN_SUPPORT of the independent signals (category names, sentence similarity,
product knowledge words, nearest exemplar title: Candidate.support), and lead
the best runner-up outside its own branch by a clear margin. A parent just
behind its child is agreement on the branch, not doubt.
The threshold was calibrated on held-out folds (see docs/classification.md).
`custom_instructions` are ignored: there is nothing here that could read them.
"""

from __future__ import annotations

from typing import Sequence

from shared.ai.models import Decision
from shared.taxonomy.models import Candidate
from shared.taxonomy.search import SCORE_HALF_POINT

# Calibrated on store hold-out folds of dev.jsonl and checked on the clean
# sets (docs/classification.md): a lead of about 11 raw score points.
DEFAULT_CONFIDENCE_THRESHOLD = 0.16
# Of the four signals that vote (Candidate.support), how many must agree.
MIN_SUPPORT = 2


class LocalSelector:
    def __init__(self, threshold: float | None = None) -> None:
        self.threshold = DEFAULT_CONFIDENCE_THRESHOLD if threshold is None else threshold

    def select(
        self,
        product: str,
        candidates: Sequence[Candidate],
        custom_instructions: str | None,
    ) -> Decision:
        if not candidates:
            return Decision(category_id=None)
        if confidence(candidates) < self.threshold:
            return Decision(category_id=None)
        return Decision(category_id=candidates[0].category.id)


def confidence(candidates: Sequence[Candidate], min_support: int = MIN_SUPPORT) -> float:
    """How sure the best candidate is right, in [0, 1): 0 unless the signals agree on it.

    Otherwise its lead over the best runner-up that is not its ancestor or
    descendant, in raw score points m, as m / (m + SCORE_HALF_POINT).
    """
    best = candidates[0]
    if best.support < min_support:
        return 0.0
    # A parent just behind its child is agreement on the branch, not doubt.
    rival = next((c for c in candidates[1:] if not best.category.in_line_with(c.category)), None)
    lead = _raw(best.score) - (_raw(rival.score) if rival else 0.0)
    return max(lead, 0.0) / (max(lead, 0.0) + SCORE_HALF_POINT)


def _raw(relevance: float) -> float:
    """The fused score a relevance in [0, 1) came from (inverse of search._relevance)."""
    return SCORE_HALF_POINT * relevance / (1.0 - relevance) if relevance < 1.0 else float("inf")

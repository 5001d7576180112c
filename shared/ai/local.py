"""The offline selector: accept the best candidate only when the evidence agrees on it.

It asks no model. Its confidence is a small logistic model over what the
candidate generator already measured (see `evidence`): how many independent
signals (category names, sentence similarity, product knowledge words,
nearest exemplar title: Candidate.support) favour the best candidate's
branch and how many favour exactly the answer, its lead over the best
runner-up outside its own branch (a parent just behind its child is
agreement on the branch, not doubt), how strong the best match is, and
whether the answer is a leaf. Its coefficients and the threshold were fitted
on held-out folds by bench/selector_calibration.py (docs/classification.md).

When the best candidate is a parent and a child of it is what the signals
name, the child is the answer: careful catalogues file a product at the most
specific category that fits.
`custom_instructions` are ignored: there is nothing here that could read them.
"""

from __future__ import annotations

import math
from typing import Sequence

from shared.ai.models import Decision
from shared.taxonomy.models import PATH_SEPARATOR, Candidate
from shared.taxonomy.search import SCORE_HALF_POINT

# The signals that vote (Candidate.support counts them).
VOTING_SIGNALS = 4
# Below this many votes for its branch the best candidate is never answered,
# whatever its lead: one signal alone is how brands were read as products.
MIN_SUPPORT = 2
# Exact votes a descendant needs to take the answer from the best candidate
# (and more than it has): with one, dev.jsonl's exact share dropped by 0.01
# (merchants label generally) for no more gain on the clean sets than two give.
MIN_CHILD_VOTES = 2
# Logistic model: P(answer exact) = sigmoid(INTERCEPT + sum(coefficient x evidence)).
# Fitted by bench/selector_calibration.py (L2 0.1, Newton's method) on every
# item of bench/data/clean-common.jsonl and clean-random.jsonl in both
# taxonomies (436), from the `taxonomist eval --details` files of this code;
# "support" is negative beside "votes": branch votes that are not for the
# answer itself are votes for a sibling or a parent. Output and per-fold
# figures: docs/selector-calibration.txt.
CONFIDENCE_INTERCEPT = -4.781
CONFIDENCE_COEFFICIENTS = {
    "lead": 3.663,
    "support": -1.007,
    "votes": 1.878,
    "score": 4.066,
    "leaf": 2.390,
}
# The lowest threshold (steps of 0.05) at which the same model fitted on two
# folds of three and scored on the third answered the held-out everyday
# products at an exact precision of at least 0.90, pooled, in both taxonomies.
DEFAULT_CONFIDENCE_THRESHOLD = 0.60


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
        return Decision(category_id=answer(candidates).category.id)


def answer(candidates: Sequence[Candidate]) -> Candidate:
    """The best candidate, or the descendant of it that more signals name exactly.

    Support counts a vote for a child for its parent too, so a parent often
    leads on the child's evidence; a descendant with more exact votes than
    the best candidate (and MIN_CHILD_VOTES) is what the signals meant.
    """
    best = candidates[0]
    below = best.category.path + PATH_SEPARATOR
    descendants = [c for c in candidates[1:] if c.category.path.startswith(below)]
    named = max(descendants, key=lambda c: c.votes, default=None)
    if named is not None and named.votes > best.votes and named.votes >= MIN_CHILD_VOTES:
        return named
    return best


def evidence(candidates: Sequence[Candidate]) -> dict[str, float]:
    """What the confidence is computed from, each in [0, 1]."""
    best, chosen = candidates[0], answer(candidates)
    # A parent just behind its child is agreement on the branch, not doubt.
    rival = next((c for c in candidates[1:] if not best.category.in_line_with(c.category)), None)
    lead = max(_raw(best.score) - (_raw(rival.score) if rival else 0.0), 0.0)
    return {
        "lead": lead / (lead + SCORE_HALF_POINT),
        "support": best.support / VOTING_SIGNALS,
        "votes": chosen.votes / VOTING_SIGNALS,
        "score": best.score,
        # Careful catalogues file at the most specific category that fits.
        "leaf": float(chosen.category.is_leaf),
    }


def confidence(candidates: Sequence[Candidate]) -> float:
    """The model's probability that the answer is exactly right; 0 without MIN_SUPPORT."""
    if candidates[0].support < MIN_SUPPORT:
        return 0.0
    features = evidence(candidates)
    logit = CONFIDENCE_INTERCEPT + sum(
        weight * features[name] for name, weight in CONFIDENCE_COEFFICIENTS.items()
    )
    return 1.0 / (1.0 + math.exp(-logit))


def _raw(relevance: float) -> float:
    """The fused score a relevance in [0, 1) came from (inverse of search._relevance)."""
    return SCORE_HALF_POINT * relevance / (1.0 - relevance) if relevance < 1.0 else float("inf")

"""The pipeline: candidates from the taxonomy index, then a selector picks one or declines."""

from __future__ import annotations

from typing import Mapping

from shared.ai.models import Selector
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    CONFIDENCE_NONE,
    ClassificationRequest,
    ClassificationResult,
)
from shared.taxonomy.search import CandidateIndex


class Classifier:
    def __init__(
        self,
        indexes: Mapping[str, CandidateIndex],
        selector: Selector,
        candidate_count: int,
    ) -> None:
        self.indexes = dict(indexes)
        self.selector = selector
        self.candidate_count = candidate_count

    def classify(self, request: ClassificationRequest) -> ClassificationResult:
        """Classify one product. AIError subclasses propagate to the caller."""
        index = self.indexes[request.taxonomy]
        candidates = index.candidates(
            request.product, limit=self.candidate_count, leafs_only=request.leafs_only
        )
        if not candidates:
            return ClassificationResult(category=None, confidence=CONFIDENCE_NONE)
        decision = self.selector.select(
            request.product, candidates, request.custom_instructions
        )
        by_id = {candidate.category.id: candidate.category for candidate in candidates}
        tokens = {
            "prompt_tokens": decision.prompt_tokens,
            "completion_tokens": decision.completion_tokens,
        }
        # A decision outside the candidates is no decision: the product text
        # cannot steer the answer anywhere the candidate generator did not go.
        chosen = by_id.get(decision.category_id) if decision.category_id else None
        if chosen is not None:
            return ClassificationResult(chosen, CONFIDENCE_AI, candidates, **tokens)
        if request.fallback_to_best_guess:
            return ClassificationResult(
                candidates[0].category, CONFIDENCE_FALLBACK, candidates, **tokens
            )
        return ClassificationResult(None, CONFIDENCE_NONE, candidates, **tokens)

"""The pipeline: candidates from the taxonomy index, then a selector picks one or declines."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from shared.ai.models import CallSlots, Selector
from shared.ai.service import build_selector
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    CONFIDENCE_NONE,
    TAXONOMY_NAMES,
    ClassificationRequest,
    ClassificationResult,
)
from shared.settings import Settings
from shared.taxonomy.models import Candidate
from shared.taxonomy.search import CandidateIndex
from shared.taxonomy.service import load_index


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
        return self.decide(request, self.candidates(request))

    def candidates(self, request: ClassificationRequest) -> list[Candidate]:
        """The candidates the selector chooses among for this request."""
        return self.indexes[request.taxonomy].candidates(
            request.product, limit=self.candidate_count, leafs_only=request.leafs_only
        )

    def classify_many(
        self, requests: Sequence[ClassificationRequest]
    ) -> list[ClassificationResult]:
        """`classify()` of each request, in order, with candidates generated in batches.

        Requests sharing a taxonomy and `leafs_only` get their candidates from one
        `candidates_many` call; the selector then runs item by item, in order, and
        an AIError it raises propagates, as from `classify()`.
        """
        candidates: list[list[Candidate]] = [[] for _ in requests]
        groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
        for position, request in enumerate(requests):
            groups[(request.taxonomy, request.leafs_only)].append(position)
        for (taxonomy, leafs_only), positions in groups.items():
            found = self.indexes[taxonomy].candidates_many(
                [requests[position].product for position in positions],
                limit=self.candidate_count,
                leafs_only=leafs_only,
            )
            for position, item_candidates in zip(positions, found):
                candidates[position] = item_candidates
        return [
            self.decide(request, item_candidates)
            for request, item_candidates in zip(requests, candidates)
        ]

    def decide(
        self, request: ClassificationRequest, candidates: list[Candidate]
    ) -> ClassificationResult:
        """The selector's choice among the candidates, or the fallback."""
        if not candidates:
            return ClassificationResult(category=None, confidence=CONFIDENCE_NONE)
        decision = self.selector.select(
            request.product, candidates, request.custom_instructions
        )
        by_id = {candidate.category.id: candidate.category for candidate in candidates}
        # A decision outside the candidates is no decision: the product text
        # cannot steer the answer anywhere the candidate generator did not go.
        chosen = by_id.get(decision.category_id) if decision.category_id else None
        tokens: dict[str, Any] = {
            "prompt_tokens": decision.prompt_tokens,
            "completion_tokens": decision.completion_tokens,
            "invalid_answer": decision.invalid or (decision.category_id is not None and chosen is None),
            "truncated_answer": decision.truncated,
        }
        if chosen is not None:
            return ClassificationResult(chosen, CONFIDENCE_AI, candidates, **tokens)
        if request.fallback_to_best_guess:
            return ClassificationResult(
                candidates[0].category, CONFIDENCE_FALLBACK, candidates, **tokens
            )
        return ClassificationResult(None, CONFIDENCE_NONE, candidates, **tokens)


def build_classifier(settings: Settings, call_slots: CallSlots | None = None) -> Classifier:
    """Load both taxonomies' indexes (from the on-disk cache when it is current).

    `call_slots` cap the upstream AI's calls in flight (AI_MAX_CONCURRENCY); the
    caller builds them, for this layer knows nothing of Redis.
    """
    taxonomy_dir = settings.require_taxonomy_dir()
    indexes = {
        name: load_index(taxonomy_dir, name, settings.index_cache_dir())
        for name in TAXONOMY_NAMES
    }
    return Classifier(indexes, build_selector(settings, call_slots), settings.candidate_count)

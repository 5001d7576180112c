"""Candidate generation: the categories whose names best match a product.

`CandidateIndex` is read-only once built, so threads may share it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.taxonomy.bm25 import BM25
from shared.taxonomy.models import Candidate, Taxonomy
from shared.taxonomy.query import query_terms

DEFAULT_LIMIT = 15
NAME_FIELD_WEIGHT = 1.0
PATH_FIELD_WEIGHT = 0.5
# Raw scores map to [0, 1] as s / (s + SCORE_HALF_POINT): a raw score of this
# size, roughly two good term matches, reads as 0.5.
SCORE_HALF_POINT = 10.0


@dataclass(frozen=True)
class CandidateIndex:
    taxonomy: Taxonomy
    ids: list[str]
    leaf_mask: np.ndarray
    names: BM25
    paths: BM25

    def raw_scores(self, product: str) -> np.ndarray:
        query = query_terms(product)
        return NAME_FIELD_WEIGHT * self.names.scores(query) + PATH_FIELD_WEIGHT * self.paths.scores(
            query
        )

    def candidates(
        self, product: str, *, limit: int = DEFAULT_LIMIT, leafs_only: bool = False
    ) -> list[Candidate]:
        """Up to `limit` categories, best first, each scored in [0, 1]."""
        scores = self.raw_scores(product)
        if leafs_only:
            scores = np.where(self.leaf_mask, scores, -np.inf)
        order = _top(scores, limit)
        categories = self.taxonomy.categories
        return [
            Candidate(categories[self.ids[i]], _relevance(float(scores[i])))
            for i in order
            if scores[i] > 0
        ]


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the `limit` highest scores, highest first, ties by index (stable)."""
    limit = min(limit, len(scores))
    if limit <= 0:
        return np.array([], dtype=np.int64)
    part = np.argpartition(-scores, limit - 1)[:limit]
    return part[np.lexsort((part, -scores[part]))]


def _relevance(raw: float) -> float:
    return raw / (raw + SCORE_HALF_POINT)

"""Candidate generation: the categories whose names best match a product.

A category's raw score fuses four signals and a prior (weights measured on
the dev set, see docs/classification.md):
- BM25 of the query against its name field (translations and aliases included);
- how much of its own name the query covers;
- cosine similarity of the title's static embedding and the category's;
- cosine similarity of the multilingual sentence embeddings of the listing's
  beginning and of the category's name;
- minus a little per level of depth: merchants file products under general
  categories more often than the taxonomy's shape suggests, and a deep
  category must earn its place with a better match.
`CandidateIndex` is read-only once built, so threads may share it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.taxonomy.embeddings import StaticEmbedder
from shared.taxonomy.lexical import TermIndex
from shared.taxonomy.models import Candidate, Taxonomy
from shared.taxonomy.query import query_terms, semantic_text, split_listing
from shared.taxonomy.sentences import SentenceEmbedder
from shared.taxonomy.text import clean

DEFAULT_LIMIT = 15
NAME_WEIGHT = 1.0
PATH_WEIGHT = 0.1
COVERAGE_WEIGHT = 20.0
EMBEDDING_WEIGHT = 30.0
SEMANTIC_WEIGHT = 60.0
DEPTH_PENALTY = 2.0
# Raw scores map to [0, 1] as s / (s + SCORE_HALF_POINT), so a raw score of
# this size (a full name match, a good BM25 score, close embeddings) reads as 0.5.
SCORE_HALF_POINT = 60.0


@dataclass(frozen=True)
class CandidateIndex:
    taxonomy: Taxonomy
    ids: list[str]
    leaf_mask: np.ndarray
    names: TermIndex
    paths: TermIndex
    coverage: TermIndex
    vectors: np.ndarray
    embedder: StaticEmbedder
    sentence_vectors: np.ndarray
    sentence_embedder: SentenceEmbedder
    depths: np.ndarray

    def raw_scores(self, product: str) -> np.ndarray:
        """Fused scores of every category; all zero when the text has no letter at all.

        Text in scripts the lexical side does not read (Hebrew, Thai, ...) is
        still scored by its embeddings. Scores are never negative.
        """
        if not any(char.isalpha() for char in clean(product)):
            return np.zeros(len(self.ids), dtype=np.float32)
        query = query_terms(product)
        present = {term: 1.0 for term in query}
        title_vector = self.embedder.embed([clean(split_listing(product)[0])])[0]
        sentence_vector = self.sentence_embedder.embed([semantic_text(product)])[0]
        scores = (
            NAME_WEIGHT * self.names.scores(query)
            + PATH_WEIGHT * self.paths.scores(query)
            + COVERAGE_WEIGHT * np.minimum(self.coverage.scores(present), 1.0)
            + EMBEDDING_WEIGHT * np.maximum(self.vectors @ title_vector, 0.0)
            + SEMANTIC_WEIGHT * np.maximum(self.sentence_vectors @ sentence_vector, 0.0)
            - DEPTH_PENALTY * self.depths
        )
        return np.maximum(scores, 0.0)

    def candidates(
        self, product: str, *, limit: int = DEFAULT_LIMIT, leafs_only: bool = False
    ) -> list[Candidate]:
        """`limit` categories (leaves only if asked), best first, each scored in [0, 1].

        None when the text holds no letter at all (only numbers or symbols).
        """
        scores = self.raw_scores(product)
        if not scores.any():
            return []
        if leafs_only:
            scores = np.where(self.leaf_mask, scores, -np.inf)
        categories = self.taxonomy.categories
        return [
            Candidate(categories[self.ids[i]], _relevance(float(scores[i])))
            for i in _top(scores, limit)
            if np.isfinite(scores[i])
        ]


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the `limit` highest scores, highest first, ties by position."""
    limit = min(limit, len(scores))
    if limit <= 0:
        return np.array([], dtype=np.int64)
    part = np.argpartition(-scores, limit - 1)[:limit]
    return part[np.lexsort((part, -scores[part]))]


def _relevance(raw: float) -> float:
    return raw / (raw + SCORE_HALF_POINT)

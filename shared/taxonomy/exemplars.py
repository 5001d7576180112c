"""Nearest exemplars: how close a listing is to the product titles written for a category.

Every exemplar title of the product knowledge (shared/taxonomy/knowledge) is
embedded once at index build. A category's exemplar score is the similarity
of the listing to its closest exemplar: a centroid would blur a category that
holds different-looking products (an iPhone and a flip phone). Only the
categories the other signals shortlist are scored, so a product reads a few
hundred rows, not the tens of thousands written. Rows are kept in fewer
dimensions (as in lowrank.py), in half precision in the index cache (41 MB
for Shopify) and in single precision once loaded (82 MB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from shared.taxonomy.lowrank import LowRankVectors

ROW_DTYPE = np.float16


@dataclass(frozen=True)
class Exemplars:
    vectors: LowRankVectors  # reduced rows in ROW_DTYPE, grouped by category
    offsets: np.ndarray  # rows of category c are offsets[c]:offsets[c + 1]

    @classmethod
    def build(cls, vectors: np.ndarray, counts: list[int], rank: int) -> "Exemplars":
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(counts)
        if len(vectors) <= rank:
            fitted = LowRankVectors.identity(vectors)
        else:
            fitted = LowRankVectors.fit(vectors, rank)
        return cls(fitted.with_reduced(fitted.reduced.astype(ROW_DTYPE)), offsets)

    def best_similarities(self, query: np.ndarray, categories: np.ndarray) -> np.ndarray:
        """Highest similarity of one unit query vector to each listed category's exemplars.

        Zero for a category without exemplars.
        """
        starts = self.offsets[categories]
        counts = self.offsets[categories + 1] - starts
        best = np.zeros(len(categories), dtype=np.float32)
        total = int(counts.sum())
        if total == 0:
            return best
        owners = np.repeat(np.arange(len(categories)), counts)
        first_of_owner = np.repeat(np.cumsum(counts) - counts, counts)
        rows = starts[owners] + np.arange(total) - first_of_owner
        similarities = self.vectors.similarities_of_rows(query, rows)
        has_any = counts > 0
        best[has_any] = np.maximum.reduceat(similarities, (np.cumsum(counts) - counts)[has_any])
        return best

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {**self.vectors.to_arrays(prefix), f"{prefix}offsets": self.offsets}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> "Exemplars":
        """Widened to float32 once, on loading: converting the gathered half-precision
        rows at every product cost ~1 ms (numpy's float16 conversion is slow)."""
        vectors = LowRankVectors.from_arrays(arrays, prefix)
        return cls(
            vectors.with_reduced(vectors.reduced.astype(np.float32)), arrays[f"{prefix}offsets"]
        )

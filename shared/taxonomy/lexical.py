"""Okapi BM25 over a fixed set of documents, as flat numpy arrays.

Documents are bags of weighted terms. The index is an inverted file: for each
term, the documents containing it and the term's BM25 weight there, both
precomputed, so a query is one `bincount` over the postings of its terms.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class BM25:
    vocabulary: dict[str, int]
    # Postings of term t are doc_ids[offsets[t]:offsets[t + 1]] and weights[...].
    offsets: np.ndarray
    doc_ids: np.ndarray
    weights: np.ndarray
    document_count: int

    @classmethod
    def build(cls, documents: Sequence[Mapping[str, float]]) -> "BM25":
        """Index documents given as {term: term frequency} (frequencies may be weighted)."""
        lengths = np.array([sum(doc.values()) for doc in documents], dtype=np.float64)
        average_length = max(float(lengths.mean()), 1e-9) if len(documents) else 1.0
        document_frequency = Counter(term for doc in documents for term in doc)
        vocabulary = {term: index for index, term in enumerate(sorted(document_frequency))}
        postings: list[list[tuple[int, float]]] = [[] for _ in vocabulary]
        n = len(documents)
        for doc_id, doc in enumerate(documents):
            norm = K1 * (1 - B + B * lengths[doc_id] / average_length)
            for term, frequency in doc.items():
                idf = np.log(1 + (n - document_frequency[term] + 0.5) / (document_frequency[term] + 0.5))
                postings[vocabulary[term]].append((doc_id, idf * frequency * (K1 + 1) / (frequency + norm)))
        offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(p) for p in postings])
        flat = [pair for p in postings for pair in p]
        return cls(
            vocabulary=vocabulary,
            offsets=offsets,
            doc_ids=np.array([d for d, _ in flat], dtype=np.int32),
            weights=np.array([w for _, w in flat], dtype=np.float32),
            document_count=n,
        )

    def scores(self, query: Mapping[str, float]) -> np.ndarray:
        """BM25 score of every document for a query {term: weight}."""
        ids, weights = [], []
        for term, query_weight in query.items():
            index = self.vocabulary.get(term)
            if index is None:
                continue
            start, end = self.offsets[index], self.offsets[index + 1]
            ids.append(self.doc_ids[start:end])
            weights.append(self.weights[start:end] * query_weight)
        if not ids:
            return np.zeros(self.document_count, dtype=np.float32)
        return np.bincount(
            np.concatenate(ids), np.concatenate(weights), minlength=self.document_count
        ).astype(np.float32)

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {
            f"{prefix}vocabulary": np.array(list(self.vocabulary), dtype=str),
            f"{prefix}offsets": self.offsets,
            f"{prefix}doc_ids": self.doc_ids,
            f"{prefix}weights": self.weights,
            f"{prefix}document_count": np.array(self.document_count),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> "BM25":
        vocabulary = arrays[f"{prefix}vocabulary"].tolist()
        return cls(
            vocabulary={term: index for index, term in enumerate(vocabulary)},
            offsets=arrays[f"{prefix}offsets"],
            doc_ids=arrays[f"{prefix}doc_ids"],
            weights=arrays[f"{prefix}weights"],
            document_count=int(arrays[f"{prefix}document_count"]),
        )

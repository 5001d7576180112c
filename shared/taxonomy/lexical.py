"""Lexical matching: inverted files of weighted terms, as flat numpy arrays.

For each term, the documents containing it and a precomputed weight there,
so scoring a query is one `bincount` over the postings of its terms. Two
weightings are built:
- BM25 (Okapi), the relevance of a document to the query terms;
- name coverage: the share of a category name's information (IDF mass) that
  the query contains. BM25 alone ranks "Water Polo Balls" above "Polos" for a
  polo shirt; coverage prefers the name the product fully matches.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from shared.taxonomy.text import is_latin

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class TermIndex:
    vocabulary: dict[str, int]
    # Postings of term t are doc_ids[offsets[t]:offsets[t + 1]] and weights[...].
    offsets: np.ndarray
    doc_ids: np.ndarray
    weights: np.ndarray
    document_count: int

    def scores(self, query: Mapping[str, float]) -> np.ndarray:
        """Sum over query terms of query weight x posting weight, for every document."""
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
            f"{prefix}{WORD_LIST_SUFFIX}": np.array(list(self.vocabulary), dtype=str),
            f"{prefix}offsets": self.offsets,
            f"{prefix}doc_ids": self.doc_ids,
            f"{prefix}weights": self.weights,
            f"{prefix}document_count": np.array(self.document_count),
        }

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, np.ndarray], prefix: str, word_maps: "WordMaps | None" = None
    ) -> "TermIndex":
        """The index saved under `prefix`; its word map built by `word_maps` (shared objects) if given."""
        return cls(
            vocabulary=(word_maps or WordMaps()).word_map(arrays, f"{prefix}{WORD_LIST_SUFFIX}"),
            offsets=arrays[f"{prefix}offsets"],
            doc_ids=arrays[f"{prefix}doc_ids"],
            weights=arrays[f"{prefix}weights"],
            document_count=int(arrays[f"{prefix}document_count"]),
        )


# Saved arrays whose name ends so are word lists (TermIndex, WordModel).
WORD_LIST_SUFFIX = "vocabulary"
SHARED_WORDS = "shared_words"


def share_words(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same arrays with every word list stored as positions in one list of all their words.

    The fields of an index (names, knowledge, heads, the branch models...)
    hold many of the same words: read back through WordMaps, each word is
    then one string object in memory, not one per field.
    """
    lists = [name for name in arrays if name.endswith(WORD_LIST_SUFFIX)]
    words = np.unique(np.concatenate([arrays[name] for name in lists]))
    shared = {name: array for name, array in arrays.items() if name not in lists}
    shared[SHARED_WORDS] = words
    for name in lists:
        shared[f"{name}_positions"] = np.searchsorted(words, arrays[name]).astype(np.int32)
    return shared


class WordMaps:
    """Builds the word -> row maps of one index's fields from shared objects.

    A map built on its own holds its own copy of each word and of each row
    number above 256: about 115 bytes an entry (Google's names map: 20.1 MB
    for 174,296 words), and the fields of both taxonomies have about 830,000
    entries. Built here from arrays that
    `share_words` wrote, a word is one string object and a row number one
    int object however many maps hold them, and fields with the same word
    list (the two branch models) share one map. Arrays that hold their word
    lists as words are read too.
    """

    def __init__(self, arrays: Mapping[str, np.ndarray] | None = None) -> None:
        self._words: list[str] = (
            arrays[SHARED_WORDS].tolist() if arrays is not None and SHARED_WORDS in arrays else []
        )
        self._numbers: list[int] = []
        self._maps: dict[bytes, dict[str, int]] = {}

    def word_map(self, arrays: Mapping[str, np.ndarray], name: str) -> dict[str, int]:
        """The word -> row map of the word list saved as `name`."""
        shared = f"{name}_positions" in arrays
        saved = arrays[f"{name}_positions"] if shared else arrays[name]
        key = hashlib.sha256(saved.dtype.str.encode() + saved.tobytes()).digest()
        if key not in self._maps:
            listed = saved.tolist()
            words = [self._words[position] for position in listed] if shared else listed
            if len(words) > len(self._numbers):
                self._numbers.extend(range(len(self._numbers), len(words)))
            self._maps[key] = dict(zip(words, self._numbers))
        return self._maps[key]


def bm25_index(documents: Sequence[Mapping[str, float]]) -> TermIndex:
    """Index documents given as {term: term frequency} (frequencies may be weighted)."""
    lengths = [_latin_length(doc) for doc in documents]
    average_length = max(sum(lengths) / len(lengths), 1e-9) if documents else 1.0
    idf = _idf(documents)

    def weigh(doc_id: int, term: str, frequency: float) -> float:
        norm = K1 * (1 - B + B * lengths[doc_id] / average_length)
        return idf[term] * frequency * (K1 + 1) / (frequency + norm)

    return _build(documents, weigh)


def _latin_length(document: Mapping[str, float]) -> float:
    """A document's length for BM25, in Latin-script terms only.

    Translated names and knowledge in other scripts (Cyrillic, Hebrew, Japanese...)
    restate what the English words say: they are not verbosity, and adding them
    must not reorder the matches of Latin-script listings (measured: it did,
    docs/classification.md, "Thirteenth round").
    """
    return sum(weight for term, weight in document.items() if is_latin(term))


def coverage_index(documents: Sequence[Mapping[str, float]]) -> TermIndex:
    """Weights such that a query holding every term of a document scores 1 on it."""
    idf = _idf(documents)
    totals = [sum(idf[term] for term in doc) or 1.0 for doc in documents]
    return _build(documents, lambda doc_id, term, _: idf[term] / totals[doc_id])


def _idf(documents: Sequence[Mapping[str, float]]) -> dict[str, float]:
    n = len(documents)
    frequency = Counter(term for doc in documents for term in doc)
    return {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in frequency.items()}


def _build(documents: Sequence[Mapping[str, float]], weigh) -> TermIndex:
    vocabulary = {
        term: index for index, term in enumerate(sorted({t for doc in documents for t in doc}))
    }
    postings: list[list[tuple[int, float]]] = [[] for _ in vocabulary]
    for doc_id, doc in enumerate(documents):
        for term, frequency in doc.items():
            postings[vocabulary[term]].append((doc_id, weigh(doc_id, term, frequency)))
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in postings])
    flat = [pair for p in postings for pair in p]
    return TermIndex(
        vocabulary=vocabulary,
        offsets=offsets,
        doc_ids=np.array([d for d, _ in flat], dtype=np.int32),
        weights=np.array([w for _, w in flat], dtype=np.float32),
        document_count=len(documents),
    )

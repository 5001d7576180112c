"""Semantic matching with static word embeddings that ship inside a wheel.

The `wordllama` package carries its 256-dimension "l2_supercat" token
embeddings and tokenizer in the wheel, so nothing is downloaded at run time.
A text's vector is the mean of its token vectors, unit length; no neural
network runs, so embedding a title takes well under a millisecond.
(`WordLlama.load()` looks for the tokenizer under a folder name the wheel does
not use and then tries the network, hence the files are opened here directly.)
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

PACKAGE = "wordllama"
WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
TENSOR = "embedding.weight"


class StaticEmbedder:
    def __init__(self) -> None:
        root = resources.files(PACKAGE)
        # Kept in float16 as shipped: half the memory, rows are widened when used.
        self.table = load_file(str(root / WEIGHTS_FILE))[TENSOR]
        self.tokenizer = Tokenizer.from_file(str(root / TOKENIZER_FILE))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @property
    def dimensions(self) -> int:
        return int(self.table.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text; an empty text gives a zero row."""
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                vectors[row] = self.table[encoding.ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


@lru_cache(maxsize=1)
def shared_embedder() -> StaticEmbedder:
    """One embedder per process: both taxonomies' indexes use the same table."""
    return StaticEmbedder()

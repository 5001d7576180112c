import numpy as np
import pytest

from shared.taxonomy.lowrank import LowRankVectors


def _unit_rows(rng, rows: int, columns: int) -> np.ndarray:
    vectors = rng.standard_normal((rows, columns)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_full_rank_gives_exact_similarities_and_round_trips():
    rng = np.random.default_rng(0)
    vectors, queries = _unit_rows(rng, 40, 16), _unit_rows(rng, 3, 16)
    low = LowRankVectors.fit(vectors, rank=16)
    assert low.similarities(queries) == pytest.approx(queries @ vectors.T, abs=1e-5)
    again = LowRankVectors.from_arrays(low.to_arrays("x_"), "x_")
    assert np.array_equal(again.similarities(queries), low.similarities(queries))


def test_low_rank_keeps_the_leading_directions():
    rng = np.random.default_rng(1)
    # 8 strong directions plus a little noise in 32 dimensions.
    vectors = rng.standard_normal((200, 8)) @ rng.standard_normal((8, 32)) + 0.01 * rng.standard_normal((200, 32))
    queries = rng.standard_normal((5, 32))
    low = LowRankVectors.fit(vectors.astype(np.float32), rank=8)
    assert low.reduced.shape == (200, 8)
    assert low.similarities(queries.astype(np.float32)) == pytest.approx(queries @ vectors.T, rel=0.02, abs=0.5)

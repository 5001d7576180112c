"""A parent's exemplar titles that are one of its descendants' products are not its own."""

import numpy as np

from shared.taxonomy.knowledge.store import Knowledge
from shared.taxonomy.models import Category, Taxonomy
from shared.taxonomy.service import parents_own_titles


def _category(category_id: str, path: str, parent_id: str | None, is_leaf: bool) -> Category:
    return Category(category_id, path.split(" > ")[-1], path, parent_id, path.count(" > ") + 1, is_leaf)


TAXONOMY = Taxonomy(
    "Shopify",
    "test",
    {
        c.id: c
        for c in [
            _category("el", "Electronics", None, False),
            _category("el-1", "Electronics > Computers", "el", False),
            _category("el-1-1", "Electronics > Computers > Laptops", "el-1", True),
        ]
    },
)


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_parents_title_close_to_a_descendants_goes_and_the_rest_stays():
    laptop, desktop, bundle = _unit(1, 0, 0), _unit(0, 1, 0), _unit(0.3, 0.3, 1)
    near_laptop = _unit(1, 0.2, 0)  # cosine 0.98 with the laptop title
    knowledge = {
        "el": Knowledge(["Electronics bundle", "MacBook Air 13"], ["electronics"]),
        "el-1": Knowledge(["MacBook Air M2 13", "Dell desktop PC"], ["computer", "pc"]),
        "el-1-1": Knowledge(["MacBook Pro 14"], ["laptop"]),
    }
    vectors = {
        "el": np.stack([bundle, near_laptop]),
        "el-1": np.stack([near_laptop, desktop]),
        "el-1-1": np.stack([laptop]),
    }

    kept, kept_vectors = parents_own_titles(TAXONOMY, knowledge, vectors, 0.7)

    assert kept["el-1"].titles == ["Dell desktop PC"]
    assert kept["el-1"].terms == ["computer", "pc"]
    np.testing.assert_array_equal(kept_vectors["el-1"], desktop[None, :])
    # A grandchild's product is no more the grandparent's own.
    assert kept["el"].titles == ["Electronics bundle"]
    # A leaf keeps everything.
    assert kept["el-1-1"].titles == ["MacBook Pro 14"]
    # What was given is not changed.
    assert knowledge["el-1"].titles == ["MacBook Air M2 13", "Dell desktop PC"]


def test_at_a_higher_threshold_a_merely_similar_title_stays():
    laptop, similar = _unit(1, 0, 0), _unit(1, 0.8, 0)  # cosine 0.78
    knowledge = {"el-1": Knowledge(["Chromebook"], []), "el-1-1": Knowledge(["MacBook"], [])}
    vectors = {"el-1": similar[None, :], "el-1-1": laptop[None, :]}

    assert parents_own_titles(TAXONOMY, knowledge, vectors, 0.9)[0]["el-1"].titles == ["Chromebook"]
    assert parents_own_titles(TAXONOMY, knowledge, vectors, 0.7)[0]["el-1"].titles == []

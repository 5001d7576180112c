import numpy as np

from shared.taxonomy.children import Children

# 0 > 1 > 3, 0 > 2, 4 > 5 (two top-level categories)
PARENTS = np.array([-1, 0, 0, 1, -1, 4])


def test_a_parent_learns_how_far_its_best_child_beats_it():
    values = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 0.0], dtype=np.float32)
    # 0's best child (1) beats it by 1, 1's child (3) by 1; 4's child is behind it.
    assert Children.build(PARENTS).best_child_excess(values).tolist() == [1, 1, 0, 0, 0, 0]


def test_a_child_learns_how_far_its_parent_beats_it():
    values = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 0.0], dtype=np.float32)
    assert Children.build(PARENTS).parent_excess(values).tolist() == [0, 0, 0.5, 0, 0, 1]


def test_a_taxonomy_of_top_levels_only_has_no_excess():
    children = Children.build(np.array([-1, -1]))
    values = np.array([1.0, 2.0], dtype=np.float32)
    assert children.best_child_excess(values).tolist() == [0, 0]
    assert children.parent_excess(values).tolist() == [0, 0]


def test_every_parent_learns_its_best_childs_value_and_a_leaf_has_none():
    values = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 0.0], dtype=np.float32)
    best = Children.build(PARENTS).best_child(values)
    assert best.tolist() == [2, 3, -np.inf, -np.inf, 0, -np.inf]
    assert best.dtype == values.dtype

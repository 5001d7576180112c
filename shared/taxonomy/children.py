"""A taxonomy's parent-child links as arrays: how far each category's best child outscores it.

A parent's product knowledge also describes what its children sell, so a
parent matches a listing nearly as well as the child the listing belongs to;
where a child matches better, the parent should give way (search.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Children:
    order: np.ndarray  # the positions of every category with a parent, grouped by parent
    starts: np.ndarray  # where each parent's group begins in `order`
    parents: np.ndarray  # the parent (position) of each group
    parent_rows: np.ndarray  # each category's parent's position, -1 for a top-level category

    @classmethod
    def build(cls, parent_rows: np.ndarray) -> "Children":
        """From each category's parent's position (-1 for a top-level category)."""
        has_parent = np.flatnonzero(parent_rows >= 0)
        order = has_parent[np.argsort(parent_rows[has_parent], kind="stable")]
        parents, starts = np.unique(parent_rows[order], return_index=True)
        return cls(order, starts, parents, parent_rows)

    def best_child(self, values: np.ndarray) -> np.ndarray:
        """For every category, its best child's value (-inf for a leaf)."""
        best = np.full_like(values, -np.inf)
        if len(self.order):
            best[self.parents] = np.maximum.reduceat(values[self.order], self.starts)
        return best

    def best_child_excess(self, values: np.ndarray) -> np.ndarray:
        """For every category, how much its best child's value exceeds its own (0 if none does)."""
        excess = np.zeros_like(values)
        best = self.best_child(values)[self.parents]
        excess[self.parents] = np.maximum(best - values[self.parents], 0.0)
        return excess

    def parent_excess(self, values: np.ndarray) -> np.ndarray:
        """For every category, how much its parent's value exceeds its own (0 at the top level)."""
        excess = np.zeros_like(values)
        has_parent = self.parent_rows >= 0
        parent_values = values[self.parent_rows[has_parent]]
        excess[has_parent] = np.maximum(parent_values - values[has_parent], 0.0)
        return excess

"""Categories and taxonomies as the rest of the service sees them."""

from __future__ import annotations

from dataclasses import dataclass, field

PATH_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class Category:
    id: str
    name: str
    path: str
    parent_id: str | None
    depth: int
    is_leaf: bool

    @property
    def tags(self) -> list[str]:
        return self.path.split(PATH_SEPARATOR)

    @property
    def line(self) -> str:
        return f"{self.id} - {self.path}"

    def in_line_with(self, other: "Category") -> bool:
        """This is `other`, one of its ancestors or one of its descendants: the same branch."""
        mine, theirs = self.path + PATH_SEPARATOR, other.path + PATH_SEPARATOR
        return mine.startswith(theirs) or theirs.startswith(mine)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A category proposed for a product, with a relevance score in [0, 1]."""

    category: Category
    score: float
    # How many independent signals favour it or a relative (CandidateIndex._support).
    support: int = 0
    # How many of those favour exactly it, not a relative.
    votes: int = 0


@dataclass
class Taxonomy:
    name: str  # "Google" or "Shopify", as the API spells it
    version: str
    categories: dict[str, Category] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.categories)

    def get(self, category_id: str) -> Category | None:
        return self.categories.get(category_id)

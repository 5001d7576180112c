"""Print the categories that still need product knowledge, with the context a writer needs.

    python -m shared.taxonomy.knowledge.worklist TAXONOMY_DIR Google|Shopify [--slice K/N]
        [--all | --parents]

For each category without a record (all of them with --all): its id and path,
its children and its siblings, so that what is written belongs at that level
and not in a neighbour. When a taxonomy version adds or renames categories,
only those are listed.

With --parents: every category below the top level that has children, with
its children (and theirs, in brackets) and what its records already hold,
for writing what is filed at the parent's own level because no child fits
(twelfth round, docs/classification.md).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy
from shared.taxonomy.knowledge.store import Knowledge, load_knowledge
from shared.taxonomy.models import Category, Taxonomy

MAX_NEIGHBOURS = 40
# A parent's children shown with --parents, and each child's own children.
MAX_CHILDREN = 60
MAX_GRANDCHILDREN = 12
# What a parent's records already hold, shown with --parents.
SHOWN_TITLES = 12
SHOWN_TERMS = 16


def missing(taxonomy: Taxonomy, include_all: bool = False) -> list[Category]:
    known = {} if include_all else load_knowledge(taxonomy.name, taxonomy.version)
    return [category for category in taxonomy.categories.values() if category.id not in known]


def describe(category: Category, children: dict[str | None, list[Category]]) -> str:
    lines = [f"### {category.id} | {category.path}"]
    kids = children.get(category.id, [])
    if kids:
        lines.append("children: " + "; ".join(kid.name for kid in kids[:MAX_NEIGHBOURS]))
    siblings = [other for other in children.get(category.parent_id, []) if other.id != category.id]
    if siblings:
        more = (
            f" (+{len(siblings) - MAX_NEIGHBOURS} more)" if len(siblings) > MAX_NEIGHBOURS else ""
        )
        lines.append("siblings: " + "; ".join(s.name for s in siblings[:MAX_NEIGHBOURS]) + more)
    return "\n".join(lines)


def children_by_parent(taxonomy: Taxonomy) -> dict[str | None, list[Category]]:
    """Each category's children in file order; the top level under None."""
    children: dict[str | None, list[Category]] = {}
    for category in taxonomy.categories.values():
        children.setdefault(category.parent_id, []).append(category)
    return children


def parents(taxonomy: Taxonomy, children: dict[str | None, list[Category]]) -> list[Category]:
    """The categories with children, below the top level, in file order."""
    return [c for c in taxonomy.categories.values() if c.id in children and c.parent_id is not None]


def describe_parent(
    category: Category, children: dict[str | None, list[Category]], record: Knowledge | None
) -> str:
    kids = children[category.id]
    shown = []
    for kid in kids[:MAX_CHILDREN]:
        below = children.get(kid.id, [])
        more = " ..." if len(below) > MAX_GRANDCHILDREN else ""
        names = "; ".join(grandchild.name for grandchild in below[:MAX_GRANDCHILDREN])
        shown.append(f"{kid.name} ({names}{more})" if below else kid.name)
    more = f" (+{len(kids) - MAX_CHILDREN} more)" if len(kids) > MAX_CHILDREN else ""
    lines = [f"### {category.id} | {category.path}", "children: " + " | ".join(shown) + more]
    if record is not None:
        lines.append(
            "already written for this level: titles: "
            + " ; ".join(record.titles[:SHOWN_TITLES])
            + " || terms: "
            + ", ".join(record.terms[:SHOWN_TERMS])
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("taxonomy_dir", type=Path)
    parser.add_argument("taxonomy", choices=[GOOGLE, SHOPIFY])
    parser.add_argument("--slice", default="1/1", help="K/N: the K-th of N contiguous slices")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--all", action="store_true", help="list categories that have a record too")
    mode.add_argument(
        "--parents", action="store_true", help="list parents, for what is filed at their own level"
    )
    args = parser.parse_args(argv)
    taxonomy = load_taxonomy(args.taxonomy_dir, args.taxonomy)
    children = children_by_parent(taxonomy)
    if args.parents:
        knowledge = load_knowledge(taxonomy.name, taxonomy.version)
        todo = parents(taxonomy, children)
        entries = (describe_parent(c, children, knowledge.get(c.id)) + "\n" for c in todo)
    else:
        todo = missing(taxonomy, args.all)
        entries = (describe(c, children) for c in todo)
    k, n = (int(part) for part in args.slice.split("/"))
    start, stop = len(todo) * (k - 1) // n, len(todo) * k // n
    for entry in itertools.islice(entries, start, stop):
        print(entry)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

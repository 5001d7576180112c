"""Print the categories that still need product knowledge, with the context a writer needs.

    python -m shared.taxonomy.knowledge.worklist TAXONOMY_DIR Google|Shopify [--slice K/N]

For each category without a record (all of them with --all): its id and path,
its children and its siblings, so that what is written belongs at that level
and not in a neighbour. When a taxonomy version adds or renames categories,
only those are listed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy
from shared.taxonomy.knowledge.store import load_knowledge
from shared.taxonomy.models import Category, Taxonomy

MAX_NEIGHBOURS = 40


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("taxonomy_dir", type=Path)
    parser.add_argument("taxonomy", choices=[GOOGLE, SHOPIFY])
    parser.add_argument("--slice", default="1/1", help="K/N: the K-th of N contiguous slices")
    parser.add_argument("--all", action="store_true", help="list categories that have a record too")
    args = parser.parse_args(argv)
    taxonomy = load_taxonomy(args.taxonomy_dir, args.taxonomy)
    children: dict[str | None, list[Category]] = {}
    for category in taxonomy.categories.values():
        children.setdefault(category.parent_id, []).append(category)
    todo = missing(taxonomy, args.all)
    k, n = (int(part) for part in args.slice.split("/"))
    start, stop = len(todo) * (k - 1) // n, len(todo) * k // n
    for category in todo[start:stop]:
        print(describe(category, children))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

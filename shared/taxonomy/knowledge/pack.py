"""Merge a taxonomy version's knowledge files into one gzipped file, one record per category.

    python -m shared.taxonomy.knowledge.pack TAXONOMY_DIR

Writers append to files of their own (`*.jsonl`); this folds every file of a
version's folder into `knowledge.jsonl.gz`: a category's records become one,
in the taxonomy's order, with repeated titles and terms (same words, any
case) kept once. The merged files are removed. Run `check` afterwards.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy
from shared.taxonomy.knowledge.store import (
    DATA_DIR,
    Knowledge,
    folder_name,
    knowledge_files,
    load_knowledge,
)
from shared.taxonomy.models import Taxonomy

PACKED_NAME = "knowledge.jsonl.gz"


def pack(taxonomy: Taxonomy, data_dir: Path = DATA_DIR) -> Path:
    files = knowledge_files(taxonomy.name, taxonomy.version, data_dir)
    knowledge = load_knowledge(taxonomy.name, taxonomy.version, data_dir)
    order = {category_id: n for n, category_id in enumerate(taxonomy.categories)}
    # Ids the taxonomy lacks (removed categories) go last, for `check` to list.
    ids = sorted(knowledge, key=lambda category_id: (order.get(category_id, len(order)), category_id))
    target = data_dir / folder_name(taxonomy.name, taxonomy.version) / PACKED_NAME
    temporary = target.with_suffix(".tmp")
    with gzip.open(temporary, "wt", encoding="utf-8") as out:
        for category_id in ids:
            out.write(json.dumps(_record(category_id, knowledge[category_id]), ensure_ascii=False))
            out.write("\n")
    for path in files:
        path.unlink()
    temporary.replace(target)
    return target


def _record(category_id: str, knowledge: Knowledge) -> dict:
    return {
        "id": category_id,
        "titles": _once(knowledge.titles),
        "terms": _once(knowledge.terms),
    }


def _once(texts: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for text in texts:
        key = " ".join(text.casefold().split())
        if key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("taxonomy_dir", type=Path)
    args = parser.parse_args(argv)
    for name in (GOOGLE, SHOPIFY):
        print(pack(load_taxonomy(args.taxonomy_dir, name)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Merge a taxonomy version's knowledge files into gzipped files, one record per category.

    python -m shared.taxonomy.knowledge.pack TAXONOMY_DIR

Writers append to files of their own (`*.jsonl`); this folds every file of a
version's folder into `knowledge.jsonl.gz` (past `RECORDS_PER_FILE` records,
`knowledge.2.jsonl.gz` too): a category's records become one,
in the taxonomy's order, with repeated titles and terms (same words, any
case) kept once. Titles and terms written in another script than Latin
(Ukrainian, Hebrew, Japanese...) go to `other-scripts.jsonl.gz` instead, and
the regional names (`"regional"`, store.py) to `regional.jsonl.gz`, so that
each file stays small enough to review and to diff; they sort after the
first, so the service reads a category's texts in the same order. The
merged files are removed. Run `check` afterwards.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy
from shared.taxonomy.knowledge.store import (
    DATA_DIR,
    folder_name,
    knowledge_files,
    load_knowledge,
)
from shared.taxonomy.models import Taxonomy

PACKED_NAME = "knowledge.jsonl.gz"
# Latin-script records past this many go to a second file, so that no file
# passes 2 MB (Shopify's 10,595 records pack to about 2.1 MB in one).
RECORDS_PER_FILE = 6000
CONTINUED_NAME = "knowledge.2.jsonl.gz"
OTHER_SCRIPTS_NAME = "other-scripts.jsonl.gz"
REGIONAL_NAME = "regional.jsonl.gz"
# The last code point of the Latin alphabets (accented and extended letters included).
LATIN_END = 0x024F


def pack(taxonomy: Taxonomy, data_dir: Path = DATA_DIR) -> list[Path]:
    """The packed files written: the Latin-script one, and the other scripts' and the regional
    names' where there are any."""
    files = knowledge_files(taxonomy.name, taxonomy.version, data_dir)
    knowledge = load_knowledge(taxonomy.name, taxonomy.version, data_dir)
    order = {category_id: n for n, category_id in enumerate(taxonomy.categories)}
    # Ids the taxonomy lacks (removed categories) go last, for `check` to list.
    ids = sorted(knowledge, key=lambda category_id: (order.get(category_id, len(order)), category_id))
    by_file: dict[str, list[dict]] = {PACKED_NAME: [], OTHER_SCRIPTS_NAME: [], REGIONAL_NAME: []}
    for category_id in ids:
        titles, terms = _once(knowledge[category_id].titles), _once(knowledge[category_id].terms)
        for name, latin in ((PACKED_NAME, True), (OTHER_SCRIPTS_NAME, False)):
            record = {
                "id": category_id,
                "titles": [text for text in titles if _is_latin_text(text) == latin],
                "terms": [text for text in terms if _is_latin_text(text) == latin],
            }
            # Every category keeps its line in the first file, as `check` expects of a record.
            if latin or record["titles"] or record["terms"]:
                by_file[name].append(record)
        regional = _once(knowledge[category_id].regional)
        if regional:
            by_file[REGIONAL_NAME].append(
                {"id": category_id, "titles": [], "terms": [], "regional": regional}
            )
    latin_records = by_file[PACKED_NAME]
    by_file[PACKED_NAME], by_file[CONTINUED_NAME] = (
        latin_records[:RECORDS_PER_FILE],
        latin_records[RECORDS_PER_FILE:],
    )
    folder = data_dir / folder_name(taxonomy.name, taxonomy.version)
    temporaries = {
        folder / name: _write(folder / name, records)
        for name, records in by_file.items()
        if records
    }
    for path in files:
        path.unlink()
    for target, temporary in temporaries.items():
        temporary.replace(target)
    return list(temporaries)


def _write(target: Path, records: list[dict]) -> Path:
    temporary = target.with_suffix(".tmp")
    with gzip.open(temporary, "wt", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
    return temporary


def _is_latin_text(text: str) -> bool:
    """Whether a title or term is written in the Latin script: it has a Latin letter, or no letter.

    Read from its characters, not its `terms()`: a short word ("ג'ק", a jack)
    gives no term but is no Latin text.
    """
    letters = [char for char in text if char.isalpha()]
    return not letters or any(ord(char) <= LATIN_END for char in letters)


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
        for path in pack(load_taxonomy(args.taxonomy_dir, name)):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

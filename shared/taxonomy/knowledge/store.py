"""Product knowledge per category: what merchants sell there and the words they use.

Each taxonomy version has a folder under `data/` (`google-2021-09-21`,
`shopify-2025-08-unstable`) of JSON-lines files, plain (`*.jsonl`, as written)
or gzipped (`*.jsonl.gz`, as shipped). One record a line:

    {"id": "<category id>", "titles": ["<a product title as merchants write it>", ...],
     "terms": ["<a word or phrase for that kind of product>", ...],
     "regional": ["<its names in Latin American Spanish and Brazilian Portuguese>", ...]}

"regional" is optional: those names are searched as a field of their own
(fourteenth round, docs/classification.md), so that they do not lengthen
the English field and reorder English listings' matches.

A category may appear in several records (a later one adds to the earlier);
categories with no record work from their names alone.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

DATA_DIR = Path(__file__).parent / "data"


@dataclass
class Knowledge:
    titles: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    regional: list[str] = field(default_factory=list)


def folder_name(taxonomy: str, version: str) -> str:
    return f"{taxonomy.lower()}-{version}"


def knowledge_files(taxonomy: str, version: str, data_dir: Path = DATA_DIR) -> list[Path]:
    folder = data_dir / folder_name(taxonomy, version)
    if not folder.is_dir():
        return []
    return sorted([*folder.glob("*.jsonl"), *folder.glob("*.jsonl.gz")])


def read_records(path: Path) -> Iterator[tuple[int, dict | None, str]]:
    """(line number, record or None when malformed, raw line) for each non-blank line."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                yield number, None, line
                continue
            yield number, record if _well_formed(record) else None, line


def _well_formed(record: object) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return False
    return all(_strings(record.get(key)) for key in ("titles", "terms")) and _strings(record.get("regional", []))


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def load_knowledge(taxonomy: str, version: str, data_dir: Path = DATA_DIR) -> dict[str, Knowledge]:
    """Every category's knowledge for this taxonomy version; malformed lines are skipped."""
    found: dict[str, Knowledge] = {}
    for path in knowledge_files(taxonomy, version, data_dir):
        for _, record, _ in read_records(path):
            if record is None:
                continue
            entry = found.setdefault(record["id"], Knowledge())
            entry.titles.extend(title.strip() for title in record["titles"] if title.strip())
            entry.terms.extend(term.strip() for term in record["terms"] if term.strip())
            entry.regional.extend(name.strip() for name in record.get("regional", []) if name.strip())
    return found

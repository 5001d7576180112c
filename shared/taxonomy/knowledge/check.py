"""Check the product knowledge against the taxonomy files: complete, well-formed, and not thin.

    python -m shared.taxonomy.knowledge.check TAXONOMY_DIR [--thin N]

For each taxonomy: how many categories have a record, the ids of those that
do not, malformed lines (file and line), records for ids the taxonomy does
not have (a category renamed or removed), and the thin ones (fewer than
MIN_TITLES titles or MIN_TERMS terms). Exits 1 when a category has no record
or a line is malformed, 0 otherwise (thin records are listed, not failed).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy
from shared.taxonomy.knowledge.store import DATA_DIR, knowledge_files, load_knowledge, read_records
from shared.taxonomy.models import Taxonomy

MIN_TITLES = 4
MIN_TERMS = 5
SHOWN = 20


@dataclass
class Report:
    taxonomy: str
    version: str
    categories: int
    with_record: int = 0
    missing: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    thin: list[str] = field(default_factory=list)
    titles: int = 0
    terms: int = 0
    regional: int = 0

    @property
    def ok(self) -> bool:
        return not self.missing and not self.malformed


def check(taxonomy: Taxonomy, data_dir: Path = DATA_DIR) -> Report:
    report = Report(taxonomy.name, taxonomy.version, len(taxonomy))
    for path in knowledge_files(taxonomy.name, taxonomy.version, data_dir):
        for number, record, _ in read_records(path):
            if record is None:
                report.malformed.append(f"{path.name}:{number}")
    knowledge = load_knowledge(taxonomy.name, taxonomy.version, data_dir)
    report.unknown = sorted(set(knowledge) - set(taxonomy.categories))
    for category_id in taxonomy.categories:
        entry = knowledge.get(category_id)
        if entry is None:
            report.missing.append(category_id)
            continue
        report.with_record += 1
        report.titles += len(entry.titles)
        report.terms += len(entry.terms)
        report.regional += len(entry.regional)
        if len(entry.titles) < MIN_TITLES or len(entry.terms) < MIN_TERMS:
            report.thin.append(category_id)
    return report


def format_report(report: Report) -> str:
    def listed(ids: list[str]) -> str:
        more = f" (+{len(ids) - SHOWN} more)" if len(ids) > SHOWN else ""
        return ", ".join(ids[:SHOWN]) + more

    lines = [
        f"{report.taxonomy} {report.version}: {report.with_record} of {report.categories} "
        f"categories have a record ({report.titles} titles, {report.terms} terms, "
        f"{report.regional} regional names)",
    ]
    for label, ids in (
        ("without a record", report.missing),
        ("malformed lines", report.malformed),
        ("records for ids not in the taxonomy", report.unknown),
        (f"thin (< {MIN_TITLES} titles or < {MIN_TERMS} terms)", report.thin),
    ):
        if ids:
            lines.append(f"  {len(ids)} {label}: {listed(ids)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("taxonomy_dir", type=Path)
    args = parser.parse_args(argv)
    reports = []
    for name in (GOOGLE, SHOPIFY):
        reports.append(check(load_taxonomy(args.taxonomy_dir, name)))
    for report in reports:
        print(format_report(report))
    return 0 if all(report.ok for report in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())

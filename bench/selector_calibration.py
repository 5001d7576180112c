"""Coverage and precision of the local selector at each confidence threshold.

    TAXONOMY_DIR=... python bench/selector_calibration.py DETAILS.jsonl [DETAILS2.jsonl ...]

Reads the files `taxonomist eval --details` writes (run with fallback on, so
every item lists its candidates) and, per file and taxonomy, prints for a
range of thresholds the share of items the selector would answer on its own
(fallback off) and how often that answer is exact, path-consistent
(the label, an ancestor or a descendant) and right at the top level.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from shared.ai.local import MIN_SUPPORT, confidence
from shared.evaluation.metrics import is_path_consistent
from shared.settings import Settings
from shared.taxonomy.files import load_taxonomy
from shared.taxonomy.models import Candidate

THRESHOLDS = [round(0.02 * step, 2) for step in range(0, 20)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--min-support", type=int, default=MIN_SUPPORT)
    args = parser.parse_args()
    taxonomy_dir = Settings.from_environ().require_taxonomy_dir()
    taxonomies = {name: load_taxonomy(taxonomy_dir, name) for name in ("Google", "Shopify")}
    for path in args.files:
        by_taxonomy = defaultdict(list)
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            categories = taxonomies[item["taxonomy"]].categories
            candidates = [
                Candidate(categories[c["id"]], c["score"], c["support"]) for c in item["candidates"]
            ]
            if candidates:
                by_taxonomy[item["taxonomy"]].append(
                    (
                        confidence(candidates, args.min_support),
                        candidates[0].category,
                        categories[item["label"]["id"]],
                    )
                )
        for name, rows in by_taxonomy.items():
            print(
                f"\n{path.name} {name} ({len(rows)} items): threshold -> answered, exact, path, top-level"
            )
            for threshold in THRESHOLDS:
                kept = [(answer, label) for score, answer, label in rows if score >= threshold]
                if not kept:
                    continue
                exact = sum(a.id == b.id for a, b in kept) / len(kept)
                path_ok = sum(is_path_consistent(a, b) for a, b in kept) / len(kept)
                top = sum(a.tags[0] == b.tags[0] for a, b in kept) / len(kept)
                print(
                    f"  {threshold:.2f}: {len(kept) / len(rows):.3f}  {exact:.3f}  {path_ok:.3f}  {top:.3f}"
                )


if __name__ == "__main__":
    main()

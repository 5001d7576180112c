"""Fusion weights measured on held-out folds: every signal computed once, fused many ways.

    TAXONOMY_DIR=... python bench/fusion_folds.py FILE.jsonl [FILE2.jsonl ...] --taxonomy Shopify \
        [--set knowledge=0,10,20 --set exemplar=0,40,80] [--folds 3]

For each labelled file: items are split into folds by their "source" (a store:
every item of a store in one fold) or, in a file of few sources, by position. Each
combination of the --set values (on top of the taxonomy's current weights)
is scored on every fold: recall@1/5/15, path-consistent and top-level
agreement of the first candidate. The figures print per fold, so a weight
is kept only when the folds agree. No weight is fitted to one item.

Most weights only fuse signals computed once; those that change how the
listing is read (READING_WEIGHTS) recompute the signals for each of their values.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import zlib
from pathlib import Path

import numpy as np

from shared.settings import Settings
from shared.taxonomy.search import (
    EXEMPLAR_SHORTLIST,
    TAXONOMY_WEIGHTS,
    _has_letters,
    exemplar_scores,
)
from shared.taxonomy.knowledge.store import DATA_DIR as KNOWLEDGE_DIR
from shared.taxonomy.service import load_index

# Weights that change the signals themselves, not how they are summed.
READING_WEIGHTS = ("branch_listing_share", "translated_terms")
# The exemplar scores are computed for this many categories per item (the
# shortlist of the current weights, widened), then reused for every variant.
EXEMPLAR_POOL = 2 * EXEMPLAR_SHORTLIST


def read(path: Path, taxonomy: str) -> list[dict]:
    items = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [item for item in items if item["taxonomy"] == taxonomy]


def fold_numbers(items: list[dict], folds: int) -> np.ndarray:
    """By store when the file has many stores (dev.jsonl), else by position."""
    sources = [item.get("source") or "" for item in items]
    if len(set(sources)) >= 2 * folds:
        return np.array([zlib.crc32(source.encode()) % folds for source in sources])
    return np.arange(len(items)) % folds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--taxonomy", required=True)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], help="weight=v1,v2,...")
    parser.add_argument("--knowledge-dir", type=Path, default=KNOWLEDGE_DIR)
    args = parser.parse_args()
    settings = Settings.from_environ()
    index = load_index(
        settings.require_taxonomy_dir(),
        args.taxonomy,
        settings.index_cache_dir(),
        args.knowledge_dir,
    )
    base = TAXONOMY_WEIGHTS[args.taxonomy]
    grid = [
        (name, [float(v) for v in values.split(",")])
        for name, values in (s.split("=") for s in args.set)
    ]
    variants = [
        dataclasses.replace(base, **dict(zip([n for n, _ in grid], combo)))
        for combo in itertools.product(*[values for _, values in grid])
    ] or [base]
    for path in args.files:
        items = [i for i in read(path, args.taxonomy) if _has_letters(i["product"])]
        texts = [i["product"] for i in items]
        labels = [index.taxonomy.categories[str(i["categoryId"])] for i in items]
        label_rows = np.array([index.ids.index(label.id) for label in labels])
        folds = fold_numbers(items, args.folds)
        print(
            f"\n{path.name} ({args.taxonomy}, {len(items)} items, folds {np.bincount(folds).tolist()})"
        )
        read_as = None
        for weights in variants:
            reading = {name: getattr(weights, name) for name in READING_WEIGHTS}
            if reading != read_as:
                reader = dataclasses.replace(index, weights=dataclasses.replace(index.weights, **reading))
                sentences, signals = reader.signals_many(texts)
                pools, exemplar = _exemplar_pool(index, base, sentences, signals)
                read_as = reading
            scores = fused_scores(index, weights, signals, pools, exemplar, texts)
            changed = {
                f.name: getattr(weights, f.name)
                for f in dataclasses.fields(weights)
                if getattr(weights, f.name) != getattr(base, f.name) or f.name in dict(grid)
            }
            line = fold_line(index, scores, label_rows, labels, folds)
            print(f"  {changed}: {line}")


def fused_scores(index, weights, signals, pools, exemplar, texts) -> np.ndarray:
    """The fusion of `weights` (items x categories), the nearest exemplars added on each
    item's pool, and the texts that sell a service filed as the service does it."""
    scores = index.fuse(signals, weights)
    for row in range(len(scores)):
        scores[row, pools[row]] += weights.exemplar * exemplar_scores(
            exemplar[row], weights.exemplar_margin
        )
    index.file_services(scores, texts, weights)
    return scores


def fold_line(index, scores, label_rows, labels, folds) -> str:
    """Per fold: recall@1/5/15 of the labels, path-consistent and top-level agreement of the first."""
    ranks = (scores > scores[np.arange(len(labels)), label_rows][:, None]).sum(axis=1)
    tops = scores.argmax(axis=1)
    parts = []
    for fold in range(folds.max() + 1):
        mask = folds == fold
        r = ranks[mask]
        top_paths = [index.taxonomy.categories[index.ids[t]] for t in tops[mask]]
        fold_labels = [label for label, m in zip(labels, mask) if m]
        path_ok = np.mean([a.in_line_with(b) for a, b in zip(top_paths, fold_labels)])
        top_ok = np.mean([a.tags[0] == b.tags[0] for a, b in zip(top_paths, fold_labels)])
        parts.append(
            f"{np.mean(r < 1):.3f}/{np.mean(r < 5):.3f}/{np.mean(r < 15):.3f} p{path_ok:.3f} t{top_ok:.3f}"
        )
    return " | ".join(parts)


def _exemplar_pool(index, weights, sentences, signals):
    scores = index.fuse(signals, weights)
    pools, values = [], []
    for row, query in zip(scores, sentences):
        pool = np.argpartition(-row, EXEMPLAR_POOL)[:EXEMPLAR_POOL]
        pools.append(pool)
        values.append(index.exemplars.best_similarities(query, pool))
    return pools, values


if __name__ == "__main__":
    main()

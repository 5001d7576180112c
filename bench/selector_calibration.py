"""Fit the local selector's confidence model on folds and report coverage and precision.

    TAXONOMY_DIR=... python bench/selector_calibration.py DETAILS.jsonl [...] \
        --items LABELLED.jsonl [...] [--train clean-common clean-random] [--folds 3]

Reads the files `taxonomist eval --details` writes (run with fallback on, so
every item lists its candidates; a file's name up to the first "." names its
set) and the labelled files they came from (--items: each item's "source",
its store, when it has one). Items are split into folds: by store when the
item has one (every item of a store in one fold), else by product text (one
product in both taxonomies lands in one fold). For each fold, the logistic
model of shared/ai/local.py is fitted on the other folds of the --train sets
and scores the fold held out; the script prints, per set, taxonomy and
threshold, the held-out coverage and exact precision of each fold and
pooled, the threshold chosen (the lowest at which every taxonomy's pooled
held-out precision on the everyday set reaches TARGET_PRECISION), and the
coefficients fitted on every --train item, to be copied into
shared/ai/local.py.
"""

from __future__ import annotations

import argparse
import json
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from shared.ai.local import CONFIDENCE_COEFFICIENTS, answer, evidence
from shared.settings import Settings
from shared.taxonomy.files import load_taxonomy
from shared.taxonomy.models import Candidate

FEATURES = tuple(CONFIDENCE_COEFFICIENTS)
THRESHOLDS = [round(0.05 * step, 2) for step in range(4, 20)]
TARGET_PRECISION = 0.90
# The set whose held-out precision chooses the threshold.
TARGET_SET = "clean-common"
# L2 penalty on the coefficients (not the intercept): the sets are small.
L2 = 0.1
NEWTON_STEPS = 50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--items", nargs="*", type=Path, default=[])
    parser.add_argument("--train", nargs="+", default=["clean-common", "clean-random"])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--features", nargs="+", choices=FEATURES, default=list(FEATURES))
    args = parser.parse_args()
    rows = read_rows(args.files, read_sources(args.items))
    x = np.array([[row["evidence"][name] for name in args.features] for row in rows])
    y = np.array([row["exact"] for row in rows], dtype=float)
    folds = fold_numbers(rows, args.folds)
    train = np.array([row["set"] in args.train for row in rows])
    held_out = np.zeros(len(rows))
    for fold in range(args.folds):
        fitted = fit(x[train & (folds != fold)], y[train & (folds != fold)])
        held_out[folds == fold] = predict(fitted, x[folds == fold])
    groups = defaultdict(list)
    for position, row in enumerate(rows):
        groups[(row["set"], row["taxonomy"])].append(position)
    chosen = None
    for threshold in THRESHOLDS:
        print(f"\nthreshold {threshold:.2f}: answered, exact among them (folds ... | pooled)")
        meets = True
        for (name, taxonomy), positions in sorted(groups.items()):
            per_fold = []
            for fold in range(args.folds):
                in_fold = [p for p in positions if folds[p] == fold]
                per_fold.append(_figures(_kept(in_fold, held_out, threshold), in_fold, rows))
            kept = _kept(positions, held_out, threshold)
            pooled = _figures(kept, positions, rows)
            print(f"  {name} {taxonomy}: {' | '.join(per_fold)} | {pooled}")
            if name == TARGET_SET:
                meets &= bool(kept) and np.mean([rows[p]["exact"] for p in kept]) >= TARGET_PRECISION
        if meets and chosen is None:
            chosen = threshold
    print(f"\nchosen threshold: {chosen} (pooled held-out {TARGET_SET} precision >= {TARGET_PRECISION})")
    intercept, coefficients = fit(x[train], y[train])
    print(f"fitted on every --train item ({int(train.sum())}): intercept {intercept:.3f}")
    for name, weight in zip(args.features, coefficients):
        print(f"  {name}: {weight:.3f}")


def fold_numbers(rows: list[dict], folds: int) -> np.ndarray:
    """By store in a set of many stores (dev.jsonl), else by product text."""
    stores = defaultdict(set)
    for row in rows:
        stores[row["set"]].add(row["store"])
    keys = [
        row["store"] if len(stores[row["set"]]) >= 2 * folds else row["product"] for row in rows
    ]
    return np.array([zlib.crc32(key.encode()) % folds for key in keys])


def read_sources(paths: list[Path]) -> dict[tuple[str, str], str]:
    sources = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                if item.get("source"):
                    sources[(item["taxonomy"], item["product"])] = item["source"]
    return sources


def read_rows(paths: list[Path], sources: dict[tuple[str, str], str]) -> list[dict]:
    taxonomy_dir = Settings.from_environ().require_taxonomy_dir()
    taxonomies = {name: load_taxonomy(taxonomy_dir, name) for name in ("Google", "Shopify")}
    rows = []
    for path in paths:
        set_name = path.name.split(".")[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            categories = taxonomies[item["taxonomy"]].categories
            candidates = [
                Candidate(categories[c["id"]], c["score"], c["support"], c.get("votes", 0))
                for c in item["candidates"]
            ]
            if not candidates:
                continue
            label = item["label"]["id"]
            store = sources.get((item["taxonomy"], item["product"]), "")
            rows.append(
                {
                    "set": set_name,
                    "taxonomy": item["taxonomy"],
                    "store": store,
                    "product": item["product"],
                    "evidence": evidence(candidates),
                    "exact": answer(candidates).category.id == label,
                }
            )
    return rows


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """L2-penalised logistic regression by Newton's method: (intercept, coefficients)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    penalty = L2 * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    weights = np.zeros(design.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-design @ weights))
        gradient = design.T @ (p - y) + penalty @ weights
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        weights -= np.linalg.solve(hessian, gradient)
    return float(weights[0]), weights[1:]


def predict(fitted: tuple[float, np.ndarray], x: np.ndarray) -> np.ndarray:
    intercept, coefficients = fitted
    return 1.0 / (1.0 + np.exp(-(intercept + x @ coefficients)))


def _kept(positions: list[int], scores: np.ndarray, threshold: float) -> list[int]:
    return [p for p in positions if scores[p] >= threshold]


def _figures(kept: list[int], positions: list[int], rows: list[dict]) -> str:
    if not positions:
        return "-"
    precision = np.mean([rows[p]["exact"] for p in kept]) if kept else float("nan")
    return f"{len(kept) / len(positions):.2f} {precision:.3f}"


if __name__ == "__main__":
    main()

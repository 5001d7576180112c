"""Speed and memory of candidate generation, per taxonomy, on one core.

    TAXONOMY_DIR=... python bench/candidates.py [--products FILE.jsonl] [--limit N]

Prints cold index build time, load time from the cache, median and p99
candidate generation time per product, local selector throughput, and the
resident memory of a fresh process holding both taxonomies' indexes.
Products come from a JSON-lines file with a "product" field (e.g. the eval
set); without one, the categories' own names stand in for products.
"""

from __future__ import annotations

import os

# One core, as asked of the figures: no BLAS threads, pinned to a single CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared.ai.local import LocalSelector
from shared.settings import Settings
from shared.taxonomy.service import load_index

TAXONOMIES = ("Google", "Shopify")
DEFAULT_PRODUCT_COUNT = 1000
CANDIDATE_COUNT = 15
PERCENTILE_99 = 0.99
WARM_UP_PRODUCT = "Velvet throw pillow"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=Path, help='JSON lines with a "product" field')
    parser.add_argument("--limit", type=int, default=DEFAULT_PRODUCT_COUNT)
    parser.add_argument("--rss-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    taxonomy_dir = Settings.from_environ().require_taxonomy_dir()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if args.rss_only:
        for name in TAXONOMIES:
            # One product each, so the lazily loaded encoder weights are counted too.
            load_index(taxonomy_dir, name, args.rss_only).candidates(WARM_UP_PRODUCT)
        print(resident_megabytes())
        return 0
    with tempfile.TemporaryDirectory() as cache:
        cache_dir = Path(cache)
        for name in TAXONOMIES:
            bench_taxonomy(name, taxonomy_dir, cache_dir, args)
        rss = subprocess.run(
            [sys.executable, __file__, "--rss-only", str(cache_dir)],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    print(f"resident memory, both taxonomies loaded from cache: {rss} MB")
    return 0


def bench_taxonomy(name: str, taxonomy_dir: Path, cache_dir: Path, args) -> None:
    started = time.perf_counter()
    load_index(taxonomy_dir, name, cache_dir)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    index = load_index(taxonomy_dir, name, cache_dir)
    warm = time.perf_counter() - started
    products = read_products(args.products, name, args.limit) or [
        category.name for category in list(index.taxonomy.categories.values())[: args.limit]
    ]
    timings, results = [], []
    for product in products:
        began = time.perf_counter()
        results.append(index.candidates(product, limit=CANDIDATE_COUNT))
        timings.append((time.perf_counter() - began) * 1000)
    selector = LocalSelector()
    began = time.perf_counter()
    for product, candidates in zip(products, results):
        selector.select(product, candidates, None)
    selector_rate = len(products) / (time.perf_counter() - began)
    pipeline_rate = len(products) / (sum(timings) / 1000 + len(products) / selector_rate)
    timings.sort()
    print(f"{name} ({len(index.taxonomy)} categories, version {index.taxonomy.version})")
    print(f"  index build, cold          {cold:8.2f} s")
    print(f"  index load from cache      {warm:8.2f} s")
    print(f"  candidates per product     p50 {statistics.median(timings):.2f} ms, "
          f"p99 {timings[int(PERCENTILE_99 * (len(timings) - 1))]:.2f} ms ({len(products)} products)")
    print(f"  local selector alone       {selector_rate:10.0f} products/s")
    print(f"  candidates + selector      {pipeline_rate:10.0f} products/s")


def read_products(path: Path | None, taxonomy: str, limit: int) -> list[str]:
    if path is None:
        return []
    products = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line) if line.strip() else {}
        if item.get("taxonomy", taxonomy) == taxonomy and "product" in item:
            products.append(item["product"])
    return products[:limit]


def resident_megabytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


if __name__ == "__main__":
    sys.exit(main())

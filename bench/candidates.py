"""Speed and memory of candidate generation, per taxonomy, on one core.

    TAXONOMY_DIR=... python bench/candidates.py [--products FILE.jsonl] [--limit N]

Prints cold index build time, load time from the cache, median and p99
candidate generation time per product (wall and CPU, one by one), the mean
per product through candidates_many in bulk-sized batches, local selector
throughput, and the resident memory of a fresh process holding both
taxonomies' indexes.
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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared.ai.local import LocalSelector
from shared.evaluation.metrics import percentile
from shared.settings import Settings
from shared.taxonomy.service import load_index

TAXONOMIES = ("Google", "Shopify")
DEFAULT_PRODUCT_COUNT = 1000
CANDIDATE_COUNT = 15
WARM_UP_PRODUCT = "Velvet throw pillow"
# Products per candidates_many call: a bulk job's chunk (JOB_CHUNK_SIZE).
BATCH = 50


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
            index = load_index(taxonomy_dir, name, args.rss_only)
            # Products through each index, so the lazily loaded encoder weights
            # are counted, and the encoder's token cache is as full as they make it.
            index.candidates_many(read_products(args.products, name, args.limit) or [WARM_UP_PRODUCT])
        print(resident_megabytes())
        return 0
    with tempfile.TemporaryDirectory() as cache:
        cache_dir = Path(cache)
        for name in TAXONOMIES:
            bench_taxonomy(name, taxonomy_dir, cache_dir, args)
        products = ["--products", str(args.products)] if args.products else []
        rss = subprocess.run(
            [sys.executable, __file__, "--rss-only", str(cache_dir), "--limit", str(args.limit), *products],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    print(f"resident memory, both taxonomies loaded from cache, products classified: {rss} MB")
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
    timings, cpu_timings, results = [], [], []
    for product in products:
        began, began_cpu = time.perf_counter(), time.process_time()
        results.append(index.candidates(product, limit=CANDIDATE_COUNT))
        cpu_timings.append((time.process_time() - began_cpu) * 1000)
        timings.append((time.perf_counter() - began) * 1000)
    batched_wall, batched_cpu = time_batches(index, products)
    selector = LocalSelector()
    began = time.perf_counter()
    for product, candidates in zip(products, results):
        selector.select(product, candidates, None)
    selector_rate = len(products) / (time.perf_counter() - began)
    pipeline_rate = len(products) / (sum(timings) / 1000 + len(products) / selector_rate)
    print(f"{name} ({len(index.taxonomy)} categories, version {index.taxonomy.version})")
    print(f"  index build, cold          {cold:8.2f} s")
    print(f"  index load from cache      {warm:8.2f} s")
    print(f"  candidates per product     wall {percentiles(timings)}, "
          f"CPU {percentiles(cpu_timings)} ({len(products)} products, one by one)")
    print(f"  candidates_many, {BATCH} a batch  wall {batched_wall:.2f} ms, CPU {batched_cpu:.2f} ms per product")
    print(f"  local selector alone       {selector_rate:10.0f} products/s")
    print(f"  candidates + selector      {pipeline_rate:10.0f} products/s")


def time_batches(index, products: list[str]) -> tuple[float, float]:
    """Mean wall and CPU milliseconds per product through candidates_many, as bulk jobs call it.

    Run after the one-by-one pass, so the encoder's token cache is as warm as
    a worker's that has been running a while.
    """
    began, began_cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(products), BATCH):
        index.candidates_many(products[start : start + BATCH], limit=CANDIDATE_COUNT)
    count = max(len(products), 1)
    return (
        (time.perf_counter() - began) * 1000 / count,
        (time.process_time() - began_cpu) * 1000 / count,
    )


def percentiles(timings: list[float]) -> str:
    return f"p50 {percentile(timings, 50):.2f} / p99 {percentile(timings, 99):.2f} ms"


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

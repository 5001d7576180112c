"""Median latency of POST /api/v1/products/categorize, embedded mode, local selector.

Starts `taxonomist serve` with no configuration but TAXONOMY_DIR in a fresh
folder, creates an account and a key with the CLI, sends N sequential
requests and prints the figures; then, in the same run, the pipeline's own
p50 per item (`taxonomist eval`, as bench/throughput.py runs it) and the
ratio of the two: what the service adds to the work.

    TAXONOMY_DIR=../shared/taxonomies python bench/latency.py [--requests 200]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.throughput import DEFAULT_LISTINGS, pipeline_per_item  # noqa: E402
from shared.evaluation.metrics import percentile  # noqa: E402
from tests.servers import Service, run_cli  # noqa: E402

PRODUCTS = [
    "Stainless steel chef knife, 8 inch, full tang",
    "Wooded River Mountain Storm Pillow 12x18, 100% polyester",
    "Nike Air Zoom Pegasus 39 running shoes, men's size 10",
    "Organic green tea, 100 bags",
    "Camiseta de algodón para hombre, talla M",
    "LEGO Star Wars Millennium Falcon building set",
    "Samsung 55\" 4K UHD smart TV",
    "Dog chew toy, natural rubber, large",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    if not os.environ.get("TAXONOMY_DIR"):
        sys.exit("Set TAXONOMY_DIR to the folder of the taxonomy files.")
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, DATABASE_URL=f"sqlite:///{folder}/bench.sqlite3", PYTHONPATH=str(REPO_ROOT))
        for name in ("CELERY_BROKER_URL", "REDIS_URL", "AI_PROVIDER"):
            env.pop(name, None)
        service = Service(env, Path(folder) / "serve.log")
        try:
            run_cli(["accounts", "create", "bench@example.test", "--monthly-credits", "100000",
                     "--per-minute", "100000", "--per-hour", "100000", "--per-day", "100000"], env)
            key = run_cli(["keys", "create", "bench@example.test", "--name", "bench"], env).stdout.strip()
            latencies = measure(service.url, key, args.requests)
        finally:
            service.stop()
        pipeline = pipeline_per_item(env, DEFAULT_LISTINGS)
    report(latencies, pipeline)


def measure(url: str, key: str, count: int) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    latencies = []
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        client.post("/api/v1/products/categorize", json={"product": "warm-up"})
        for n in range(count):
            body = {"product": PRODUCTS[n % len(PRODUCTS)], "fallbackToBestGuess": n % 2 == 0}
            started = time.perf_counter()
            response = client.post("/api/v1/products/categorize", json=body)
            latencies.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                sys.exit(f"request {n} answered {response.status_code}: {response.text}")
    return latencies


def report(latencies: list[float], pipeline: list[dict]) -> None:
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores, {cpu or platform.processor()}, Python {platform.python_version()}")
    print(f"requests: {len(latencies)} sequential, embedded mode, local selector")
    print(f"median: {percentile(latencies, 50):.1f} ms")
    print(f"p95: {percentile(latencies, 95):.1f} ms")
    print(f"max: {max(latencies):.1f} ms")
    for summary in pipeline:
        print(f"pipeline ({summary['count']} items, taxonomy version {summary['taxonomyVersion']}): "
              f"p50 {summary['p50Ms']:.2f} ms; median request / pipeline p50: "
              f"{percentile(latencies, 50) / summary['p50Ms']:.2f}x")


if __name__ == "__main__":
    main()

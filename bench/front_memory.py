"""Resident memory of the front (`taxonomist serve` in production mode) after startup and after N requests.

Production mode: a fresh PostgreSQL database, Redis as broker and counters,
a worker of its own. The front's VmRSS is read from /proc/<pid>/status once
/healthz answers, then after N classifications through it.

    TAXONOMY_DIR=../shared/taxonomies python bench/front_memory.py [--requests 50] [--repo PATH]

`--repo` measures another checkout's code (e.g. the main branch, for a
before/after) with this script; run it with that checkout's Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path

DEFAULT_REQUESTS = 50
PRODUCT = {"product": "Stainless steel chef knife, 8 inch, full tang"}


def resident_megabytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    # The checkout measured provides the test helpers that start its processes,
    # and `python -m` in them finds its packages first from the working folder.
    sys.path.insert(0, str(args.repo.resolve()))
    os.chdir(args.repo)
    from tests.conftest import (
        INDEX_CACHE_DIR,
        TAXONOMY_DIR,
        delete_redis_keys,
        fresh_postgres_database,
        make_customer,
        production_env,
    )
    from tests.servers import Process, Service

    from shared.classification.models import TAXONOMY_NAMES
    from shared.db.migrate import open_database
    from shared.taxonomy.service import load_index

    cache_dir = os.environ.get("TAXONOMIST_CACHE_DIR") or str(INDEX_CACHE_DIR)
    # Built here once if needed, so that the worker loads them from the cache.
    for name in TAXONOMY_NAMES:
        load_index(TAXONOMY_DIR, name, Path(cache_dir))
    namespace = f"taxonomist-bench-{uuid.uuid4().hex[:8]}"
    with fresh_postgres_database() as database_url, tempfile.TemporaryDirectory() as folder:
        open_database(database_url).dispose()
        env = production_env(database_url, namespace, TAXONOMIST_CACHE_DIR=cache_dir)
        worker = Process(["worker", "--concurrency", "1"], env, Path(folder) / "worker.log")
        front = Service(env, Path(folder) / "front.log")
        try:
            started = resident_megabytes(front.popen.pid)
            customer = make_customer(database_url, monthly=args.requests)
            statuses = _classify(front.url, customer.headers, args.requests)
            after = resident_megabytes(front.popen.pid)
        finally:
            front.stop()
            worker.stop()
            delete_redis_keys(namespace)
    print(f"code measured: {args.repo.resolve()}")
    print(f"front VmRSS after startup: {started:.1f} MB")
    print(f"front VmRSS after {args.requests} requests: {after:.1f} MB (statuses: {statuses})")
    return 0


def _classify(url: str, headers: dict[str, str], count: int) -> dict[int, int]:
    import httpx

    statuses: dict[int, int] = {}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for _ in range(count):
            status = client.post("/api/v1/products/categorize", json=PRODUCT).status_code
            statuses[status] = statuses.get(status, 0) + 1
    return statuses


if __name__ == "__main__":
    sys.exit(main())

"""A 20,000-item bulk job through HTTP: throughput, first result, memory, interactive latency.

Runs the production shape on this machine: one `taxonomist serve` front and
WORKERS `taxonomist worker` processes (one pool process each) on PostgreSQL
and Redis, the local selector. Interactive calls go on sequentially while the
job runs; their median is compared with the median when idle.

    TAXONOMY_DIR=../shared/taxonomies python bench/bulk_jobs.py [--items 20000] [--interactive-only 1]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.servers import Process, Service, run_cli  # noqa: E402

POSTGRES_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
WORKERS = 2
IDLE_SAMPLES = 100
POLL_SECONDS = 0.05
INTERACTIVE_PRODUCT = "Stainless steel chef knife, 8 inch, full tang"
NOUNS = [
    "running shoes", "chef knife", "green tea", "bluetooth headphones", "yoga mat",
    "coffee grinder", "dog chew toy", "leather wallet", "desk lamp", "wool socks",
    "garden hose", "baby stroller", "electric kettle", "camping tent", "phone case",
    "office chair", "watercolor paints", "bike helmet", "cast iron skillet", "winter jacket",
]
MODIFIERS = ["red", "large", "organic", "stainless", "kids'", "waterproof", "vintage", "compact"]


def products(count: int) -> list[str]:
    """Distinct texts, so that duplicate reuse does not flatter the figure."""
    return [
        f"{MODIFIERS[n % len(MODIFIERS)]} {NOUNS[(n // len(MODIFIERS)) % len(NOUNS)]} model {n}"
        for n in range(count)
    ]


def classifier_ms_per_item(sample: int = 500) -> float:
    """The local classifier alone, in this process: the ceiling the pipeline works under."""
    from shared.classification.models import ClassificationRequest
    from shared.classification.service import build_classifier
    from shared.settings import Settings

    classifier = build_classifier(Settings.from_environ())
    texts = products(sample)
    started = time.perf_counter()
    for product in texts:
        classifier.classify(ClassificationRequest(product=product))
    return (time.perf_counter() - started) / sample * 1000


def peak_memory_mb(pid: int) -> float:
    """VmHWM of the process and its children (a worker's pool process holds the indexes)."""
    peaks = []
    for candidate in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except FileNotFoundError:
            continue
    return max(peaks, default=0.0)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found += [int(child) for child in children]
    return [grandchild for child in found for grandchild in [child, *_children(child)]]


class InteractiveProbe(threading.Thread):
    """Sequential synchronous classifications until told to stop."""

    def __init__(self, url: str, key: str) -> None:
        super().__init__(daemon=True)
        self.url, self.key = url, key
        self.latencies: list[float] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            while not self.stop_event.is_set():
                self.latencies.append(classify_once(client, self.key))


def classify_once(client: httpx.Client, key: str) -> float:
    started = time.perf_counter()
    response = client.post(
        "/api/v1/products/categorize",
        json={"product": INTERACTIVE_PRODUCT},
        headers={"Authorization": f"Bearer {key}"},
    )
    response.raise_for_status()
    return time.perf_counter() - started


def run_job(url: str, key: str, items: int) -> dict:
    body = "id,product\n" + "".join(f"p{n},{text}\n" for n, text in enumerate(products(items)))
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
        started = time.perf_counter()
        response = client.post("/api/v1/jobs", content=body, headers={"Content-Type": "text/csv"})
        response.raise_for_status()
        accepted = time.perf_counter() - started
        job_id = response.json()["id"]
        first_result = None
        while True:
            if first_result is None:
                page = client.get(f"/api/v1/jobs/{job_id}/results", params={"limit": 1}).json()
                if page["results"]:
                    first_result = time.perf_counter() - started
            job = client.get(f"/api/v1/jobs/{job_id}").json()
            if job["status"] not in ("queued", "running"):
                break
            time.sleep(POLL_SECONDS)
        finished = time.perf_counter() - started
        downloaded = len(client.get(f"/api/v1/jobs/{job_id}/results", params={"format": "jsonl"}).text.splitlines())
    return {
        "job": job,
        "accepted": accepted,
        "first_result": first_result,
        "finished": finished,
        "downloaded": downloaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument(
        "--interactive-only",
        type=int,
        default=0,
        help="how many of the worker processes serve only the interactive queue",
    )
    args = parser.parse_args()
    if not os.environ.get("TAXONOMY_DIR"):
        sys.exit("Set TAXONOMY_DIR to the folder of the taxonomy files.")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line a request otherwise
    alone_ms = classifier_ms_per_item()
    name = f"taxonomist_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    database_url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    env = dict(
        os.environ,
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=REDIS_URL,
        REDIS_URL=REDIS_URL,
        REDIS_NAMESPACE=f"taxonomist-bench-{uuid.uuid4().hex[:8]}",
        AI_PROVIDER="local",
        PYTHONPATH=str(REPO_ROOT),
    )
    processes = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            run_cli(["accounts", "create", "bench@example.test", "--monthly-credits", str(args.items + 100_000),
                     "--per-minute", "1000000", "--per-hour", "1000000", "--per-day", "1000000"], env)
            key = run_cli(["keys", "create", "bench@example.test", "--name", "bench"], env).stdout.strip()
            front = Service(env, Path(folder) / "front.log")
            processes.append(front)
            workers = [
                Process(
                    ["worker", "--concurrency", "1", "--loglevel", "WARNING",
                     *(["--queues", "interactive"] if n < args.interactive_only else [])],
                    env,
                    Path(folder) / f"worker-{n}.log",
                )
                for n in range(WORKERS)
            ]
            processes += workers
            with httpx.Client(base_url=front.url, timeout=60) as client:
                for _ in range(10):  # until every pool process has loaded its indexes
                    classify_once(client, key)
                time.sleep(15)
                idle = [classify_once(client, key) for _ in range(IDLE_SAMPLES)]
            probe = InteractiveProbe(front.url, key)
            probe.start()
            figures = run_job(front.url, key, args.items)
            probe.stop_event.set()
            probe.join()
            memory = {
                "front": peak_memory_mb(front.popen.pid),
                "worker": max(peak_memory_mb(worker.popen.pid) for worker in workers),
            }
    finally:
        for process in processes:
            process.stop()
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    report(args.items, figures, memory, idle, probe.latencies, alone_ms, args.interactive_only)


def report(
    items: int,
    figures: dict,
    memory: dict,
    idle: list[float],
    busy: list[float],
    alone_ms: float,
    interactive_only: int,
) -> None:
    job = figures["job"]
    idle_median, busy_median = statistics.median(idle), statistics.median(busy)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"{WORKERS} worker processes ({interactive_only} of them interactive only); local selector")
    print(f"classifier alone: {alone_ms:.2f} ms/item, so at most "
          f"{WORKERS * 1000 / alone_ms:.0f} items/s for {WORKERS} processes")
    print(f"job: {items} items, status {job['status']}, counts {job['counts']}, credits {job['credits']}")
    print(f"results downloaded: {figures['downloaded']} lines")
    print(f"submission accepted (202) after {figures['accepted']:.2f} s")
    print(f"end to end: {figures['finished']:.1f} s, {items / figures['finished']:.0f} items/s")
    print(f"time to first result: {figures['first_result']:.2f} s")
    print(f"peak memory: front {memory['front']:.0f} MB, worker {memory['worker']:.0f} MB")
    print(
        f"interactive median: idle {idle_median * 1000:.1f} ms ({len(idle)} calls), "
        f"during the job {busy_median * 1000:.1f} ms ({len(busy)} calls), "
        f"ratio {busy_median / idle_median:.2f}"
    )


if __name__ == "__main__":
    main()

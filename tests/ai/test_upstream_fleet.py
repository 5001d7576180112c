"""A fleet of worker processes sharing one Redis bucket against one fake upstream.

Each process builds its own OpenAISelector, as a Celery pool process would,
and classifies its share of the items; the fake, in this process, counts
what arrived and every 429 it sent.
"""

from __future__ import annotations

import multiprocessing

import pytest
import redis

from ai_upstream_helpers import REDIS_URL, make_candidates, upstream_settings
from shared.ai.errors import AIError
from shared.ai.openai_selector import OpenAISelector
from shared.ai.bucket import BucketLimits, RedisAIBucket
from shared.ratelimit.concurrency import make_call_slots

PROCESSES = 4
FLEET_MAX_WAIT_SECONDS = 20.0
# 20 requests a second, a burst of 10: 50 items take about two seconds.
FLEET_RPM = 1200
FLEET_LIMITS = BucketLimits(requests_per_minute=FLEET_RPM, tokens_per_minute=10**9)
ITEMS_PER_PROCESS = 13
# The 429 the fake sends first, and the latency that keeps the others busy
# (mid-call) when it comes back.
PAUSE_SECONDS = 1.0
PAUSE_LATENCY_MS = 100
PAUSE_ITEMS_PER_PROCESS = 3
# Calls already on the wire when the pause is set may still arrive this late.
IN_FLIGHT_SECONDS = 0.3
# AI_MAX_CONCURRENCY against answers slow enough that every process is mid-call at once.
SLOW_CAP = 2
SLOW_LATENCY_MS = 300
SLOW_ITEMS_PER_PROCESS = 4


def _classify(settings, prefix: str, limits: BucketLimits, items: int, start, results) -> None:
    bucket = RedisAIBucket(redis.Redis.from_url(REDIS_URL), limits, prefix)
    selector = OpenAISelector.from_settings(
        settings,
        bucket,
        max_wait_seconds=FLEET_MAX_WAIT_SECONDS,
        call_slots=make_call_slots(settings),
    )
    candidates = make_candidates()
    start.wait(timeout=60)
    outcomes = []
    for _ in range(items):
        try:
            outcomes.append(selector.select("Trail running shoe", candidates, None).category_id)
        except AIError as exc:
            outcomes.append(type(exc).__name__)
    results.put(outcomes)


def run_fleet(fake, prefix: str, limits: BucketLimits, items: int, max_concurrency: int = 0) -> list:
    """Every process's outcomes: a category id, or the name of the AIError.
    With `max_concurrency`, the processes share AI_MAX_CONCURRENCY slots in Redis."""
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(PROCESSES), context.Queue()
    settings = upstream_settings(
        fake, ai_max_concurrency=max_concurrency, redis_url=REDIS_URL, redis_namespace=prefix
    )
    args = (settings, prefix, limits, items, start, results)
    processes = [context.Process(target=_classify, args=args) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    outcomes = [outcome for _ in processes for outcome in results.get(timeout=120)]
    for process in processes:
        process.join(timeout=30)
    return outcomes


def test_the_fleet_stays_under_the_upstream_limit(fake_upstream, redis_prefix):
    fake_upstream.configure(rpm=FLEET_RPM)

    outcomes = run_fleet(fake_upstream, redis_prefix, FLEET_LIMITS, ITEMS_PER_PROCESS)

    expected = make_candidates()[0].category.id
    assert outcomes == [expected] * PROCESSES * ITEMS_PER_PROCESS
    assert fake_upstream.stats["rate_limited"] == 0
    arrivals = [received.at for received in fake_upstream.received]
    steady = (len(arrivals) - FLEET_LIMITS.request_capacity) / (max(arrivals) - min(arrivals))
    # Never above the limit (with slack for timing), and not starved either.
    assert FLEET_LIMITS.request_rate * 0.5 < steady < FLEET_LIMITS.request_rate * 1.1


def test_without_a_matching_bucket_the_fake_answers_429(fake_upstream, redis_prefix):
    """The control: the fake does enforce its limit, so zero 429s above means something."""
    fake_upstream.configure(rpm=FLEET_RPM)
    four_times = BucketLimits(requests_per_minute=FLEET_RPM * 4, tokens_per_minute=10**9)

    run_fleet(fake_upstream, redis_prefix, four_times, ITEMS_PER_PROCESS)

    assert fake_upstream.stats["rate_limited"] > 0


def test_a_429_pauses_the_whole_fleet(fake_upstream, redis_prefix):
    fake_upstream.configure(latency_ms=PAUSE_LATENCY_MS)
    fake_upstream.script(f"429:{PAUSE_SECONDS}")

    outcomes = run_fleet(fake_upstream, redis_prefix, FLEET_LIMITS, PAUSE_ITEMS_PER_PROCESS)

    expected = make_candidates()[0].category.id
    assert outcomes == [expected] * PROCESSES * PAUSE_ITEMS_PER_PROCESS
    received = fake_upstream.received
    rate_limited_at = received[0].at
    after = [item.at - rate_limited_at for item in received[1:]]
    held = [delay for delay in after if IN_FLIGHT_SECONDS < delay < PAUSE_SECONDS - 0.05]
    assert held == []
    # Every process had calls left, and made them once the pause was over.
    assert len([delay for delay in after if delay >= PAUSE_SECONDS - 0.05]) >= PROCESSES


@pytest.mark.parametrize("max_concurrency", [SLOW_CAP, 0])
def test_the_fleet_never_has_more_calls_in_flight_than_its_cap(
    fake_upstream, redis_prefix, max_concurrency
):
    fake_upstream.configure(latency_ms=SLOW_LATENCY_MS)

    outcomes = run_fleet(fake_upstream, redis_prefix, FLEET_LIMITS, SLOW_ITEMS_PER_PROCESS, max_concurrency)

    expected = make_candidates()[0].category.id
    assert outcomes == [expected] * PROCESSES * SLOW_ITEMS_PER_PROCESS
    if max_concurrency:
        # At the cap, never above it: the fleet neither exceeds nor starves it.
        assert fake_upstream.max_in_flight == SLOW_CAP
    else:  # the control: uncapped, the same fleet does go above it
        assert fake_upstream.max_in_flight > SLOW_CAP

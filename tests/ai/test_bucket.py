"""The AI token buckets: the Redis one (real Redis, several OS processes) and
the in-process one, held to the same behaviour."""

from __future__ import annotations

import multiprocessing
import threading

import pytest
import redis

from shared.ai.errors import AIRateLimited
from shared.ai.bucket import (
    BucketLimits,
    LocalAIBucket,
    RedisAIBucket,
    make_ai_bucket,
)
from shared.settings import Settings
from tests.conftest import REDIS_URL

# Refill slow enough that nothing refills during a test: one request a minute.
SLOW = BucketLimits(requests_per_minute=1, tokens_per_minute=60, burst_seconds=600)
PROCESSES = 4
TRIES_PER_PROCESS = 50


def redis_bucket(prefix: str, limits: BucketLimits) -> RedisAIBucket:
    return RedisAIBucket(redis.Redis.from_url(REDIS_URL), limits, prefix)


@pytest.fixture(params=["redis", "local"])
def make_bucket(request, redis_prefix):
    if request.param == "redis":
        return lambda limits: redis_bucket(redis_prefix, limits)
    return LocalAIBucket


def test_limits_derive_capacities_from_the_burst():
    limits = BucketLimits(requests_per_minute=600, tokens_per_minute=60_000, burst_seconds=0.5)
    assert (limits.request_capacity, limits.token_capacity) == (5, 500)
    # Never below one request, whatever the burst.
    assert BucketLimits(6, 60, burst_seconds=0.1).request_capacity == 1


def test_a_full_bucket_lets_its_capacity_through_then_names_the_wait(make_bucket):
    bucket = make_bucket(BucketLimits(requests_per_minute=60, tokens_per_minute=10**6, burst_seconds=3))

    assert [bucket.try_take(1) for _ in range(3)] == [0, 0, 0]
    wait = bucket.try_take(1)
    assert 0.9 < wait <= 1.0  # one request a second


def test_tokens_limit_too(make_bucket):
    bucket = make_bucket(SLOW)  # 600 tokens of capacity
    assert bucket.try_take(400) == 0
    assert bucket.try_take(400) > 100  # 200 tokens short, at one a second


def test_a_call_larger_than_the_capacity_passes_a_full_bucket_and_empties_it(make_bucket):
    bucket = make_bucket(SLOW)
    assert bucket.try_take(1000) == 0
    # 400 below zero, plus the next call's 1 token, at one token a second.
    assert bucket.try_take(1) > 400


def test_settle_gives_back_an_overestimate(make_bucket):
    bucket = make_bucket(SLOW)
    bucket.try_take(500)
    bucket.settle(estimated_tokens=500, used_tokens=100)
    assert bucket.try_take(450) == 0  # 100 left + 400 given back


def test_settle_takes_an_underestimate(make_bucket):
    bucket = make_bucket(SLOW)
    bucket.try_take(100)
    bucket.settle(estimated_tokens=100, used_tokens=400)
    assert bucket.try_take(250) > 40  # 200 left, not 500


def test_acquire_past_max_wait_raises_with_the_wait_and_takes_nothing(make_bucket):
    bucket = make_bucket(BucketLimits(requests_per_minute=60, tokens_per_minute=10**6, burst_seconds=1))
    bucket.acquire(1, max_wait=0)

    with pytest.raises(AIRateLimited) as raised:
        bucket.acquire(1, max_wait=0.05)

    assert 0.9 < raised.value.retry_after <= 1.0
    # The refused call took nothing: the wait has not doubled.
    assert bucket.try_take(1) <= 1.0


def test_acquire_waits_when_capacity_returns_in_time(make_bucket):
    bucket = make_bucket(BucketLimits(requests_per_minute=1200, tokens_per_minute=10**6, burst_seconds=0))
    bucket.acquire(1, max_wait=0)
    bucket.acquire(1, max_wait=5)  # 50 ms later, well inside the wait allowed
    assert bucket.try_take(1) > 0


def test_a_pause_holds_every_call_and_is_never_shortened(make_bucket):
    bucket = make_bucket(BucketLimits(requests_per_minute=10**6, tokens_per_minute=10**9))
    bucket.pause(30)
    bucket.pause(5)

    assert 29 < bucket.try_take(1) <= 30
    with pytest.raises(AIRateLimited) as raised:
        bucket.acquire(1, max_wait=1)
    assert 29 < raised.value.retry_after <= 30


def _take_all(prefix: str, start: multiprocessing.Barrier, granted: multiprocessing.Queue) -> None:
    bucket = redis_bucket(prefix, SLOW)
    start.wait(timeout=60)  # all processes loaded: they take at the same time
    granted.put(sum(bucket.try_take(1) == 0 for _ in range(TRIES_PER_PROCESS)))


def test_redis_bucket_is_atomic_across_processes(redis_prefix):
    context = multiprocessing.get_context("spawn")
    start, granted = context.Barrier(PROCESSES), context.Queue()
    processes = [
        context.Process(target=_take_all, args=(redis_prefix, start, granted))
        for _ in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    counts = [granted.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=30)

    # 200 tries for 10 requests: a lost update would let more through.
    assert sum(counts) == SLOW.request_capacity


def _pause_from_another_process(prefix: str, seconds: float) -> None:
    redis_bucket(prefix, SLOW).pause(seconds)


def test_redis_pause_from_one_process_holds_the_others(redis_prefix):
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_pause_from_another_process, args=(redis_prefix, 20.0))
    process.start()
    process.join(timeout=60)
    assert process.exitcode == 0

    bucket = redis_bucket(redis_prefix, BucketLimits(10**6, 10**9))
    with pytest.raises(AIRateLimited) as raised:
        bucket.acquire(1, max_wait=1)
    assert 15 < raised.value.retry_after <= 20


def test_redis_state_expires_once_the_bucket_would_be_full(redis_prefix):
    limits = BucketLimits(requests_per_minute=60, tokens_per_minute=6000, burst_seconds=10)
    redis_bucket(redis_prefix, limits).try_take(1000)  # 10 s of tokens to refill

    ttl_ms = redis.Redis.from_url(REDIS_URL).pttl(f"{redis_prefix}:state")
    assert 10_000 < ttl_ms <= 11_000


def test_local_bucket_is_atomic_across_threads():
    bucket = LocalAIBucket(SLOW)
    granted = []

    def take_all() -> None:
        granted.append(sum(bucket.try_take(1) == 0 for _ in range(TRIES_PER_PROCESS)))

    threads = [threading.Thread(target=take_all) for _ in range(PROCESSES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sum(granted) == SLOW.request_capacity


def test_make_ai_bucket_shares_through_redis_unless_embedded():
    embedded = Settings(ai_requests_per_minute=120, ai_tokens_per_minute=1200)
    assert isinstance(make_ai_bucket(embedded), LocalAIBucket)
    assert make_ai_bucket(embedded).limits.request_rate == 2

    shared = embedded.with_overrides(redis_url=REDIS_URL, redis_namespace="test-namespace")
    bucket = make_ai_bucket(shared)
    assert isinstance(bucket, RedisAIBucket)
    try:
        bucket.pause(1)
        assert redis.Redis.from_url(REDIS_URL).exists("test-namespace:ai-bucket:pause-until")
    finally:
        redis.Redis.from_url(REDIS_URL).delete("test-namespace:ai-bucket:pause-until")

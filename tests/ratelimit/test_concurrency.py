"""The cap on calls in flight (AI_MAX_CONCURRENCY): the Redis slots (real
Redis, several OS processes, a holder killed mid-call) and the in-process
semaphore. The cap against a slowed fake upstream is in
tests/ai/test_call_slots.py."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import redis

from shared.ratelimit.concurrency import (
    KEY_SUFFIX,
    LocalCallSlots,
    RedisCallSlots,
    make_call_slots,
)
from shared.settings import Settings
from tests.conftest import REDIS_URL

CAP = 2
# Long enough that no lease expires during a test unless it means to.
LONG_LEASE_SECONDS = 60.0
SHORT_LEASE_SECONDS = 1.0
PROCESSES = 4
TRIES_PER_PROCESS = 20


def redis_slots(prefix: str, cap: int = CAP, lease_seconds: float = LONG_LEASE_SECONDS) -> RedisCallSlots:
    return RedisCallSlots(redis.Redis.from_url(REDIS_URL), cap, lease_seconds, f"{prefix}:{KEY_SUFFIX}")


def test_redis_slots_grant_the_cap_and_no_more(redis_prefix):
    slots = redis_slots(redis_prefix)
    leases = [slots.acquire(0) for _ in range(CAP)]

    assert None not in leases and len(set(leases)) == CAP
    assert slots.acquire(0.1) is None

    slots.release(leases[0])
    assert slots.acquire(0) is not None


def test_a_waiting_caller_takes_the_slot_a_release_frees(redis_prefix):
    slots = redis_slots(redis_prefix, cap=1)
    held = slots.acquire(0)
    taken: list[tuple[str | None, float]] = []
    waiter = threading.Thread(
        target=lambda: taken.append((redis_slots(redis_prefix, cap=1).acquire(10), time.monotonic()))
    )
    waiter.start()
    time.sleep(0.3)
    released_at = time.monotonic()
    slots.release(held)
    waiter.join(30)

    lease, taken_at = taken[0]
    assert lease is not None
    # After the release, and soon: the lease itself had a minute to run.
    assert released_at < taken_at < released_at + 1


def _hold_until_killed(prefix: str, held) -> None:
    slots = redis_slots(prefix, cap=1, lease_seconds=SHORT_LEASE_SECONDS)
    assert slots.acquire(0) is not None
    held.set()
    time.sleep(600)  # a call that never ends: the process is killed first


def test_a_killed_holder_frees_its_slot_when_its_lease_expires(redis_prefix):
    context = multiprocessing.get_context("spawn")
    held = context.Event()
    holder = context.Process(target=_hold_until_killed, args=(redis_prefix, held))
    holder.start()
    assert held.wait(60)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(10)
    slots = redis_slots(redis_prefix, cap=1, lease_seconds=SHORT_LEASE_SECONDS)

    assert slots.acquire(0) is None  # still held: the lease outlives its holder a while
    started = time.monotonic()
    assert slots.acquire(10) is not None
    assert time.monotonic() - started < SHORT_LEASE_SECONDS + 1


def _take_and_count(prefix: str, tries: int) -> int:
    slots = redis_slots(prefix)
    return sum(slots.acquire(0) is not None for _ in range(tries))


def test_processes_racing_for_slots_take_exactly_the_cap(redis_prefix):
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        granted = pool.starmap(_take_and_count, [(redis_prefix, TRIES_PER_PROCESS)] * PROCESSES)

    assert sum(granted) == CAP


def test_local_slots_grant_the_cap_and_wait_for_a_release():
    slots = LocalCallSlots(CAP)
    leases = [slots.acquire(0) for _ in range(CAP)]

    assert None not in leases
    assert slots.acquire(0.05) is None
    slots.release(leases[0])
    assert slots.acquire(0) is not None


def test_make_call_slots_shares_through_redis_unless_embedded():
    assert make_call_slots(Settings()) is None  # AI_MAX_CONCURRENCY=0: no cap
    embedded = Settings(ai_max_concurrency=3, ai_timeout_seconds=7)
    assert isinstance(make_call_slots(embedded), LocalCallSlots)

    shared = make_call_slots(embedded.with_overrides(redis_url=REDIS_URL, redis_namespace="test-ns"))
    assert isinstance(shared, RedisCallSlots)
    assert shared.cap == 3
    assert shared.lease_seconds > embedded.ai_timeout_seconds  # a live call never outlives its lease
    lease = shared.acquire(0)
    try:
        assert redis.Redis.from_url(REDIS_URL).zscore(f"test-ns:{KEY_SUFFIX}", lease) is not None
    finally:
        shared.release(lease)

"""The cap on calls to the upstream AI in flight (AI_MAX_CONCURRENCY).

A self-hosted server runs as many calls at once as it has slots and queues
the rest, so a fleet that sends more only lengthens every call towards its
timeout; providers limit concurrent requests too. Each call holds a slot:

    RedisCallSlots   shared by every process on every machine: a sorted set
                     of leases scored by their expiry, taken by a Lua script
    LocalCallSlots   the embedded mode: a semaphore in this process

A Redis lease expires `lease_seconds` after it was taken, so that a worker
that dies mid-call (killed, out of memory, its machine lost) frees its slot
without anyone releasing it; `make_call_slots` sets it to the call's own
timeout plus a margin, so a live call never outlives its lease. In one
process a holder cannot die without its process, so the semaphore needs no
expiry.

Both answer `acquire(max_wait)` with a lease id, or None when every slot
stayed taken for `max_wait` seconds; what a refusal means is the caller's
decision (the selector's is in shared/ai/openai_selector.py). Neither
imports shared.ai: the selector is given one at construction.
"""

from __future__ import annotations

import threading
import time
import uuid

import redis

from shared.settings import Settings

# Keys live under "<REDIS_NAMESPACE>:ai-slots".
KEY_SUFFIX = "ai-slots"
# Between taking a lease and the call's timeout: the request's way out, the
# release's round trip, a pause of the worker. Also how long a dead worker's
# slot stays taken past its call's timeout.
LEASE_MARGIN_SECONDS = 5.0
# How often a waiting caller looks for a free slot: a freed slot is taken
# within this, and each waiter costs Redis one short script per poll.
POLL_SECONDS = 0.02
# The in-process semaphore has no lease to name.
LOCAL_LEASE = "in-process"

# KEYS[1]: the leases (sorted set: lease id -> expiry in ms, Redis's clock,
# so that machines with skewed clocks agree). ARGV: lease id, cap, lease ms.
# Returns 1 when the lease was taken, 0 when every slot is held.
_ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_ms = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + lease_ms, ARGV[1])
-- The newest lease lives longest: the set goes when it would be empty.
redis.call('PEXPIRE', KEYS[1], lease_ms)
return 1
"""


class RedisCallSlots:
    """At most `cap` leases at once, for every process sharing the key."""

    def __init__(self, client: redis.Redis, cap: int, lease_seconds: float, key: str) -> None:
        self.cap = cap
        self.lease_seconds = lease_seconds
        self._client = client
        self._key = key
        self._acquire = client.register_script(_ACQUIRE_SCRIPT)

    def try_acquire(self) -> str | None:
        """A lease now, or None."""
        lease = uuid.uuid4().hex
        taken = self._acquire(
            keys=[self._key], args=[lease, self.cap, round(self.lease_seconds * 1000)]
        )
        return lease if taken else None

    def acquire(self, max_wait: float) -> str | None:
        deadline = time.monotonic() + max_wait
        while True:
            lease = self.try_acquire()
            if lease is not None:
                return lease
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            time.sleep(min(POLL_SECONDS, remaining))

    def release(self, lease: str) -> None:
        self._client.zrem(self._key, lease)


class LocalCallSlots:
    """The same cap for the threads of this process."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._semaphore = threading.BoundedSemaphore(cap)

    def acquire(self, max_wait: float) -> str | None:
        return LOCAL_LEASE if self._semaphore.acquire(timeout=max(0.0, max_wait)) else None

    def release(self, lease: str) -> None:
        self._semaphore.release()


def make_call_slots(settings: Settings) -> RedisCallSlots | LocalCallSlots | None:
    """AI_MAX_CONCURRENCY slots shared through Redis (under REDIS_NAMESPACE),
    or held in this process in the embedded mode; None when it is 0 (no cap)."""
    cap = settings.ai_max_concurrency
    if cap == 0:
        return None
    if not settings.shared_redis_url:
        return LocalCallSlots(cap)
    return RedisCallSlots(
        redis.Redis.from_url(settings.shared_redis_url),
        cap,
        lease_seconds=settings.ai_timeout_seconds + LEASE_MARGIN_SECONDS,
        key=f"{settings.redis_namespace}:{KEY_SUFFIX}",
    )

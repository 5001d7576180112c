"""The token buckets that keep every worker under the upstream AI's limits.

Two buckets in one: requests per minute and tokens per minute. A call takes
one request and its estimated tokens before it is sent; once the provider
reports the usage, `settle` corrects the estimate. When the provider answers
429 anyway, `pause` stops the whole fleet until the time it asked for.

    AIBucket                 acquire / settle / pause, the waiting loop
    ├── RedisAIBucket        shared by every process on every machine (Lua)
    └── LocalAIBucket        the embedded mode: one process, thread-safe

`acquire` waits at most `max_wait` seconds; past that it raises
`shared.ai.errors.AIRateLimited` with the seconds until capacity returns,
and takes nothing. Both buckets start full, refill continuously, and hold
at most `burst_seconds` of refill: the fleet never sends more than that
ahead of the steady rate.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

import redis

from shared.ai.errors import AIRateLimited
from shared.settings import Settings

# Keys live under "<REDIS_NAMESPACE>:ai-bucket:".
KEY_SUFFIX = "ai-bucket"
DEFAULT_KEY_PREFIX = f"{Settings.redis_namespace}:{KEY_SUFFIX}"
# Half a second of refill: small enough to stay inside a provider that
# enforces its per-minute limit per second, with room for network jitter.
DEFAULT_BURST_SECONDS = 0.5
# Floor of one poll, so that rounding never turns the wait into a busy loop.
MIN_POLL_SECONDS = 0.001


@dataclass(frozen=True, slots=True)
class BucketLimits:
    requests_per_minute: int
    tokens_per_minute: int
    burst_seconds: float = DEFAULT_BURST_SECONDS

    @property
    def request_rate(self) -> float:
        return self.requests_per_minute / 60.0

    @property
    def token_rate(self) -> float:
        return self.tokens_per_minute / 60.0

    @property
    def request_capacity(self) -> float:
        return max(1.0, self.request_rate * self.burst_seconds)

    @property
    def token_capacity(self) -> float:
        return max(1.0, self.token_rate * self.burst_seconds)


class AIBucket(ABC):
    """Capacity for calls to the upstream AI; see the module docstring."""

    limits: BucketLimits

    @abstractmethod
    def try_take(self, tokens: int) -> float:
        """Take one request and `tokens` now and return 0.0, or take nothing
        and return the seconds until they would be available."""

    @abstractmethod
    def adjust_tokens(self, delta: int) -> None:
        """Give back `delta` tokens (take them when negative)."""

    @abstractmethod
    def pause(self, seconds: float) -> None:
        """Let no call through for `seconds` (never shortens a longer pause)."""

    def acquire(self, tokens: int, max_wait: float) -> None:
        deadline = time.monotonic() + max_wait
        while True:
            wait = self.try_take(tokens)
            if wait <= 0:
                return
            if time.monotonic() + wait > deadline:
                raise AIRateLimited(retry_after=wait)
            time.sleep(max(wait, MIN_POLL_SECONDS))

    def settle(self, estimated_tokens: int, used_tokens: int) -> None:
        """Correct an acquired estimate with the usage the provider reported."""
        if used_tokens != estimated_tokens:
            self.adjust_tokens(estimated_tokens - used_tokens)


# One script for taking and adjusting, so the refill arithmetic exists once.
# A call is let through when each level holds its cost, or is full: a call
# costing more tokens than the capacity is not refused forever, it empties
# the bucket below zero and the next calls wait for the refill.
# KEYS: state hash, pause-until key.
# ARGV: op ("take" | "adjust"), amount (tokens), request rate, request
#       capacity, token rate, token capacity (rates per second).
# Returns the wait in seconds as a string (Redis truncates Lua numbers).
_BUCKET_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local op, amount = ARGV[1], tonumber(ARGV[2])
local request_rate, request_capacity = tonumber(ARGV[3]), tonumber(ARGV[4])
local token_rate, token_capacity = tonumber(ARGV[5]), tonumber(ARGV[6])
local state = redis.call('HMGET', KEYS[1], 'requests', 'tokens', 'at')
local elapsed = math.max(0, now - (tonumber(state[3]) or now))
local requests = math.min(request_capacity,
  (tonumber(state[1]) or request_capacity) + elapsed * request_rate)
local tokens = math.min(token_capacity,
  (tonumber(state[2]) or token_capacity) + elapsed * token_rate)
local wait = 0
if op == 'adjust' then
  tokens = math.min(token_capacity, tokens + amount)
else
  local paused_until = tonumber(redis.call('GET', KEYS[2]) or '0')
  wait = math.max(0, paused_until - now,
    (1 - requests) / request_rate,
    (math.min(amount, token_capacity) - tokens) / token_rate)
  if wait == 0 then
    requests = requests - 1
    tokens = tokens - amount
  end
end
redis.call('HSET', KEYS[1], 'requests', requests, 'tokens', tokens, 'at', now)
-- A missing state is a full bucket, so the key may go once it would be full.
local to_full = math.max((request_capacity - requests) / request_rate,
                         (token_capacity - tokens) / token_rate)
redis.call('PEXPIRE', KEYS[1], math.ceil(to_full * 1000) + 1000)
return tostring(wait)
"""

# KEYS: pause-until key. ARGV: seconds. Keeps the later of two pauses.
_PAUSE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local seconds = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < now + seconds then
  redis.call('SET', KEYS[1], tostring(now + seconds), 'PX', math.ceil(seconds * 1000))
end
return 0
"""


class RedisAIBucket(AIBucket):
    """The fleet's bucket: state in Redis, updated by Lua scripts, clocked by
    the Redis server so that machines with skewed clocks agree."""

    def __init__(
        self, client: redis.Redis, limits: BucketLimits, key_prefix: str = DEFAULT_KEY_PREFIX
    ) -> None:
        self.limits = limits
        self._keys = [f"{key_prefix}:state", f"{key_prefix}:pause-until"]
        self._bucket = client.register_script(_BUCKET_SCRIPT)
        self._pause = client.register_script(_PAUSE_SCRIPT)

    def _run(self, op: str, amount: int) -> float:
        limits = self.limits
        args: list[str | int | float] = [op, amount, limits.request_rate, limits.request_capacity,
                limits.token_rate, limits.token_capacity]
        return float(self._bucket(keys=self._keys, args=args))

    def try_take(self, tokens: int) -> float:
        return self._run("take", tokens)

    def adjust_tokens(self, delta: int) -> None:
        self._run("adjust", delta)

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            self._pause(keys=self._keys[1:], args=[seconds])


class LocalAIBucket(AIBucket):
    """The same bucket as `RedisAIBucket`, held in this process."""

    def __init__(self, limits: BucketLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._requests = limits.request_capacity
        self._tokens = limits.token_capacity
        self._at = time.monotonic()
        self._paused_until = 0.0

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._at)
        limits = self.limits
        self._requests = min(limits.request_capacity, self._requests + elapsed * limits.request_rate)
        self._tokens = min(limits.token_capacity, self._tokens + elapsed * limits.token_rate)
        self._at = now

    def try_take(self, tokens: int) -> float:
        limits = self.limits
        with self._lock:
            now = time.monotonic()
            self._refill(now)
            wait = max(
                0.0,
                self._paused_until - now,
                (1 - self._requests) / limits.request_rate,
                (min(tokens, limits.token_capacity) - self._tokens) / limits.token_rate,
            )
            if wait == 0:
                self._requests -= 1
                self._tokens -= tokens
            return wait

    def adjust_tokens(self, delta: int) -> None:
        with self._lock:
            self._refill(time.monotonic())
            self._tokens = min(self.limits.token_capacity, self._tokens + delta)

    def pause(self, seconds: float) -> None:
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + seconds)


def make_ai_bucket(settings: Settings, burst_seconds: float = DEFAULT_BURST_SECONDS) -> AIBucket:
    """The shared Redis bucket (under REDIS_NAMESPACE), or the in-process one
    in the embedded mode."""
    limits = BucketLimits(
        settings.ai_requests_per_minute, settings.ai_tokens_per_minute, burst_seconds
    )
    if not settings.shared_redis_url:
        return LocalAIBucket(limits)
    client = redis.Redis.from_url(settings.shared_redis_url)
    return RedisAIBucket(client, limits, f"{settings.redis_namespace}:{KEY_SUFFIX}")

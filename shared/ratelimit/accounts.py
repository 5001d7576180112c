"""Each account's own request limits, in rolling windows (minute, hour, day).

The Redis limiter is shared by every API process; the in-process one serves
the embedded mode. Both keep a log of request times and answer, for a
request over a limit, how long until the oldest request that blocks it ages
out of its window. A refused request is not logged, so a 429 costs nothing.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
import uuid

from shared.accounts.service import RateLimits
from shared.redis_pool import DEFAULT_REDIS_POOL, RedisPoolLimits

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0

# KEYS[1]: the account's log (sorted set of request times in ms).
# ARGV: now_ms, member, then (limit, window_ms) for each window.
_SLIDING_LOG = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local longest = 0
for i = 3, #ARGV, 2 do longest = math.max(longest, tonumber(ARGV[i + 1])) end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - longest)
local wait = 0
for i = 3, #ARGV, 2 do
  local limit, window = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local count = redis.call('ZCOUNT', key, '(' .. (now - window), '+inf')
  if count >= limit then
    local blocking = redis.call('ZRANGEBYSCORE', key, '(' .. (now - window), '+inf',
                                'WITHSCORES', 'LIMIT', count - limit, 1)
    wait = math.max(wait, tonumber(blocking[2]) + window - now)
  end
end
if wait > 0 then return wait end
redis.call('ZADD', key, now, ARGV[2])
redis.call('PEXPIRE', key, longest)
return 0
"""


# Whose requests are counted: an account id, or a key such as "signin:<email>".
Subject = int | str


def _windows(limits: RateLimits) -> list[tuple[int, float]]:
    return [(limits.per_minute, MINUTE), (limits.per_hour, HOUR), (limits.per_day, DAY)]


def retry_after_header(wait_seconds: float) -> str:
    """An integer of at least one second, as the contract promises."""
    return str(max(1, math.ceil(wait_seconds)))


class RedisAccountLimiter:
    def __init__(
        self, url: str, namespace: str, pool: RedisPoolLimits = DEFAULT_REDIS_POOL
    ) -> None:
        self._redis = pool.sync_client(url)
        self._key_prefix = f"{namespace}:ratelimit:"
        self._script = self._redis.register_script(_SLIDING_LOG)

    def hit(self, subject: Subject, limits: RateLimits) -> float | None:
        """Log a request of `subject`; None when allowed, else the seconds to wait."""
        args: list = [int(time.time() * 1000), uuid.uuid4().hex]
        for limit, window in _windows(limits):
            args += [limit, int(window * 1000)]
        wait_ms = self._script(keys=[f"{self._key_prefix}{subject}"], args=args)
        return int(wait_ms) / 1000 if int(wait_ms) > 0 else None

    def close(self) -> None:
        self._redis.close()


class InProcessAccountLimiter:
    def __init__(self) -> None:
        self._logs: dict[Subject, list[float]] = {}
        self._lock = threading.Lock()

    def hit(self, subject: Subject, limits: RateLimits) -> float | None:
        now = time.monotonic()
        with self._lock:
            log = self._logs.setdefault(subject, [])
            del log[: bisect.bisect_right(log, now - DAY)]
            wait = max(self._wait(log, now, limit, window) for limit, window in _windows(limits))
            if wait > 0:
                return wait
            log.append(now)
            return None

    @staticmethod
    def _wait(log: list[float], now: float, limit: int, window: float) -> float:
        first_in_window = bisect.bisect_right(log, now - window)
        count = len(log) - first_in_window
        if count < limit:
            return 0.0
        return log[first_in_window + count - limit] + window - now

    def close(self) -> None:
        return None

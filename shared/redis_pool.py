"""Bounded Redis connection pools: when every connection is in use, a call waits for one.

redis-py's asyncio pool refuses a connection beyond its cap at once
(MaxConnectionsError, a 500 for the client); its BlockingConnectionPool waits.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis
import redis.asyncio as aioredis

from shared.settings import Settings


@dataclass(frozen=True)
class RedisPoolLimits:
    max_connections: int = Settings.redis_max_connections
    # How long a call waits for a free connection; None: as long as its caller allows.
    timeout_seconds: float | None = Settings.redis_pool_timeout_seconds

    @classmethod
    def of(cls, settings: "Settings") -> "RedisPoolLimits":
        return cls(settings.redis_max_connections, settings.redis_pool_timeout_seconds)

    def client(self, url: str, **options) -> aioredis.Redis:
        """A client that owns its own pool of at most `max_connections`."""
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=self.max_connections, timeout=self.timeout_seconds, **options
        )
        return aioredis.Redis.from_pool(pool)

    def sync_client(self, url: str, **options) -> redis.Redis:
        """The same, for callers in threads (the front's admission)."""
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=self.max_connections, timeout=self.timeout_seconds, **options
        )
        return redis.Redis.from_pool(pool)


# The pools of a process built without settings (tests, tools).
DEFAULT_REDIS_POOL = RedisPoolLimits()

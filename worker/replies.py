"""How a worker hands an outcome back to the front that is waiting for it.

With Redis, the worker pushes the outcome on a short-lived list that the front
waits on with BLPOP (without blocking its event loop). In the embedded mode,
worker and front share a process, and the outcome resolves an asyncio future.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from dataclasses import replace

import redis
import redis.asyncio as aioredis

from shared.redis_pool import DEFAULT_REDIS_POOL, RedisPoolLimits

REPLY_TTL_SECONDS = 120


def new_reply_key(namespace: str) -> str:
    return f"{namespace}:reply:{uuid.uuid4().hex}"


class RedisReplies:
    def __init__(self, url: str, pool: RedisPoolLimits = DEFAULT_REDIS_POOL) -> None:
        self._url = url
        self._pool = pool
        self._sync: redis.Redis | None = None
        self._async: aioredis.Redis | None = None

    def publish(self, key: str, payload: dict) -> None:
        if self._sync is None:
            self._sync = redis.Redis.from_url(self._url)
        with self._sync.pipeline() as pipe:
            pipe.rpush(key, json.dumps(payload))
            pipe.expire(key, REPLY_TTL_SECONDS)
            pipe.execute()

    def expect(self, key: str) -> None:
        """Nothing to prepare: the list outlives a late waiter."""

    async def wait(self, key: str, timeout: float) -> dict:
        if self._async is None:
            # Each waiter holds a connection for as long as it waits: the
            # waiters beyond the pool's size queue for one within their own
            # deadline, and BLPOP needs no socket timeout of its own.
            self._async = replace(self._pool, timeout_seconds=None).client(
                self._url, socket_timeout=None
            )
        async with asyncio.timeout(timeout):
            answer = await self._async.blpop([key], timeout=timeout)
        if answer is None:
            raise TimeoutError(key)
        return json.loads(answer[1])

    def forget(self, key: str) -> None:
        """Nothing to clean: the list expires."""

    async def close(self) -> None:
        if self._async is not None:
            await self._async.aclose()


class InProcessReplies:
    def __init__(self) -> None:
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._lock = threading.Lock()

    def expect(self, key: str) -> None:
        """Register the waiter before the task is sent, so no reply can come first."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._waiting[key] = (loop, loop.create_future())

    def publish(self, key: str, payload: dict) -> None:
        with self._lock:
            waiter = self._waiting.get(key)
        if waiter is not None:
            loop, future = waiter
            loop.call_soon_threadsafe(_resolve, future, payload)

    async def wait(self, key: str, timeout: float) -> dict:
        with self._lock:
            _, future = self._waiting[key]
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self.forget(key)

    def forget(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    async def close(self) -> None:
        return None


def _resolve(future: asyncio.Future, payload: dict) -> None:
    if not future.done():
        future.set_result(payload)


def make_replies(
    redis_url: str, pool: RedisPoolLimits = DEFAULT_REDIS_POOL
) -> RedisReplies | InProcessReplies:
    return RedisReplies(redis_url, pool) if redis_url else InProcessReplies()

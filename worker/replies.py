"""How a worker hands an outcome back to the front that is waiting for it.

A reply's address names the front process's channel and the request. With
Redis, each front process subscribes to one channel of its own (pub/sub) and
one reader hands each message to the request waiting for it; the worker
PUBLISHes, and Redis says how many subscribers received it: none when the
front process is gone (its connection closed with it). In the embedded mode,
worker and front share a process, and the outcome resolves an asyncio future.

`publish` answers whether the front received the outcome: the worker charges
the credit only then (shared.flows.classify.perform).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import uuid

import redis
import redis.asyncio as aioredis

logger = logging.getLogger(__name__)

# The reader PINGs a channel that has been quiet this long, and reconnects
# when nothing (not even the PONG) came for twice as long: a Redis that
# stalls without closing the connection.
HEARTBEAT_SECONDS = 1.0
RECONNECT_DELAY_SECONDS = 0.5
# The worker's PUBLISH and its connection; an error counts as not received.
PUBLISH_TIMEOUT_SECONDS = 5.0


class RedisReplies:
    def __init__(self, url: str, namespace: str = "taxonomist") -> None:
        self._url = url
        self.channel = f"{namespace}:replies:{uuid.uuid4().hex}"
        self._waiting: dict[str, asyncio.Future] = {}
        self._subscribed = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self._publisher: redis.Redis | None = None

    def new_key(self) -> str:
        # The channel, then the request: `publish` splits at the last colon.
        return f"{self.channel}:{uuid.uuid4().hex}"

    def publish(self, key: str, payload: dict) -> bool:
        channel, _, request = key.rpartition(":")
        if self._publisher is None:
            self._publisher = redis.Redis.from_url(
                self._url,
                socket_timeout=PUBLISH_TIMEOUT_SECONDS,
                socket_connect_timeout=PUBLISH_TIMEOUT_SECONDS,
            )
        message = json.dumps({"request": request, "outcome": payload})
        try:
            return self._publisher.publish(channel, message) > 0
        except redis.RedisError:
            logger.exception("could not publish the reply on %s", channel)
            return False

    async def expect(self, key: str) -> None:
        """Register the waiter, and return once the channel is subscribed, so
        that no reply can come first and be lost."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_forever())
        self._waiting[key.rpartition(":")[2]] = asyncio.get_running_loop().create_future()
        await self._subscribed.wait()

    async def wait(self, key: str) -> dict:
        return await self._waiting[key.rpartition(":")[2]]

    def forget(self, key: str) -> None:
        self._waiting.pop(key.rpartition(":")[2], None)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._publisher is not None:
            self._publisher.close()

    async def _read_forever(self) -> None:
        """Hand each reply to its waiter; a lost connection is opened again
        (the requests waiting meanwhile end at their deadline)."""
        while True:
            try:
                await self._read()
            except Exception:
                # Whatever ended it (a lost connection, a malformed message),
                # the process keeps a reader: every reply of the process needs it.
                logger.exception("reply channel %s lost; subscribing again", self.channel)
            finally:
                self._subscribed.clear()
            await asyncio.sleep(RECONNECT_DELAY_SECONDS)

    async def _read(self) -> None:
        client = aioredis.Redis.from_url(
            self._url, socket_connect_timeout=PUBLISH_TIMEOUT_SECONDS
        )
        async with client, client.pubsub() as pubsub:
            await pubsub.subscribe(self.channel)
            loop = asyncio.get_running_loop()
            heard_at = loop.time()
            while True:
                message = await pubsub.get_message(timeout=HEARTBEAT_SECONDS)
                if message is None:
                    if loop.time() - heard_at > 2 * HEARTBEAT_SECONDS:
                        raise redis.ConnectionError("the reply channel stopped answering")
                    await pubsub.ping()
                    continue
                heard_at = loop.time()
                if message["type"] == "subscribe":
                    self._subscribed.set()
                elif message["type"] == "message":
                    self._deliver(json.loads(message["data"]))

    def _deliver(self, message: dict) -> None:
        waiter = self._waiting.get(message["request"])
        if waiter is not None:
            _resolve(waiter, message["outcome"])


class InProcessReplies:
    def __init__(self) -> None:
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._lock = threading.Lock()

    def new_key(self) -> str:
        return uuid.uuid4().hex

    async def expect(self, key: str) -> None:
        """Register the waiter before the task is sent, so no reply can come first."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._waiting[key] = (loop, loop.create_future())

    def publish(self, key: str, payload: dict) -> bool:
        with self._lock:
            waiter = self._waiting.get(key)
        if waiter is None or waiter[1].done():
            return False
        loop, future = waiter
        try:
            loop.call_soon_threadsafe(_resolve, future, payload)
        except RuntimeError:  # the front's loop has closed: nobody receives it
            return False
        return True

    async def wait(self, key: str) -> dict:
        with self._lock:
            _, future = self._waiting[key]
        return await future

    def forget(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    async def close(self) -> None:
        return None


def _resolve(future: asyncio.Future, payload: dict) -> None:
    if not future.done():
        future.set_result(payload)


def make_replies(redis_url: str, namespace: str) -> RedisReplies | InProcessReplies:
    return RedisReplies(redis_url, namespace) if redis_url else InProcessReplies()

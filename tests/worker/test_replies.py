"""The reply channel between a worker and the front waiting for it, on real Redis."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest

from tests.conftest import REDIS_URL
from worker.replies import InProcessReplies, RedisReplies, new_reply_key


def publish_later(replies, key, payload, delay):
    timer = threading.Timer(delay, replies.publish, args=(key, payload))
    timer.start()
    return timer


@pytest.fixture(params=["redis", "in-process"])
def replies(request):
    return RedisReplies(REDIS_URL) if request.param == "redis" else InProcessReplies()


def test_a_reply_slower_than_redis_default_socket_timeout_still_arrives(replies):
    key = new_reply_key(f"taxonomist-test-{uuid.uuid4().hex[:8]}")

    async def scenario():
        replies.expect(key)
        timer = publish_later(replies, key, {"status": 200}, delay=6.0)
        try:
            return await replies.wait(key, timeout=15)
        finally:
            timer.join()
            await replies.close()

    assert asyncio.run(scenario()) == {"status": 200}


def test_no_reply_is_a_timeout(replies):
    key = new_reply_key(f"taxonomist-test-{uuid.uuid4().hex[:8]}")

    async def scenario():
        replies.expect(key)
        try:
            await replies.wait(key, timeout=1)
        finally:
            await replies.close()

    with pytest.raises(TimeoutError):
        asyncio.run(scenario())

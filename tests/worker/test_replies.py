"""The reply channel between a worker and the front waiting for it, on real Redis."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest
import redis

from tests.conftest import REDIS_URL
from tests.servers import RedisServer
from worker.replies import InProcessReplies, RedisReplies

RESUBSCRIBE_SECONDS = 15


def publish_later(replies, key, payload, delay, received: list):
    timer = threading.Timer(delay, lambda: received.append(replies.publish(key, payload)))
    timer.start()
    return timer


def a_namespace() -> str:
    return f"taxonomist-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture(params=["redis", "in-process"])
def replies(request):
    return RedisReplies(REDIS_URL, a_namespace()) if request.param == "redis" else InProcessReplies()


def test_a_slow_reply_arrives_and_the_worker_knows_it_was_received(replies):
    key = replies.new_key()
    received: list[bool] = []

    async def scenario():
        await replies.expect(key)
        timer = publish_later(replies, key, {"status": 200}, delay=6.0, received=received)
        try:
            return await asyncio.wait_for(replies.wait(key), timeout=15)
        finally:
            timer.join()
            await replies.close()

    assert asyncio.run(scenario()) == {"status": 200}
    assert received == [True]


def test_once_the_waiter_is_gone_only_the_redis_channel_still_counts_as_received(replies):
    key = replies.new_key()

    async def scenario():
        await replies.expect(key)
        replies.forget(key)
        try:
            # PUBLISH counts the front process that still listens, not the
            # request: there the front's refund and the deadline decide.
            return await asyncio.to_thread(replies.publish, key, {"status": 200})
        finally:
            await replies.close()

    received = asyncio.run(scenario())
    assert received is (isinstance(replies, RedisReplies))


def test_a_reply_to_a_front_process_that_is_gone_is_not_received():
    front = RedisReplies(REDIS_URL, a_namespace())
    key = front.new_key()

    async def a_front_that_stops():
        await front.expect(key)
        await front.close()

    asyncio.run(a_front_that_stops())
    worker = RedisReplies(REDIS_URL, a_namespace())
    assert worker.publish(key, {"status": 200}) is False


def test_a_lost_subscription_is_made_again(tmp_path):
    server = RedisServer(tmp_path)
    replies = RedisReplies(server.url, a_namespace())
    before, after = replies.new_key(), replies.new_key()

    async def subscribed_again():
        admin = redis.Redis.from_url(server.url)
        while admin.pubsub_numsub(replies.channel) != [(replies.channel.encode(), 1)]:
            await asyncio.sleep(0.1)

    async def scenario():
        await replies.expect(before)
        server.stop()
        server.start()
        await asyncio.wait_for(subscribed_again(), timeout=RESUBSCRIBE_SECONDS)
        await replies.expect(after)
        received = await asyncio.to_thread(replies.publish, after, {"status": 200})
        return received, await asyncio.wait_for(replies.wait(after), timeout=5)

    try:
        assert asyncio.run(scenario()) == (True, {"status": 200})
    finally:
        server.stop()


def test_a_publish_without_redis_is_not_received(tmp_path):
    server = RedisServer(tmp_path)
    server.stop()
    replies = RedisReplies(server.url, a_namespace())
    started = time.monotonic()
    assert replies.publish(replies.new_key(), {"status": 200}) is False
    assert time.monotonic() - started < 10


def test_one_connection_serves_every_waiter():
    namespace = a_namespace()
    replies = RedisReplies(REDIS_URL, namespace)
    keys = [replies.new_key() for _ in range(200)]
    admin = redis.Redis.from_url(REDIS_URL)

    async def scenario():
        for key in keys:
            await replies.expect(key)
        subscribers = admin.pubsub_numsub(replies.channel)
        await asyncio.gather(*(asyncio.to_thread(replies.publish, key, {"n": n}) for n, key in enumerate(keys)))
        answers = await asyncio.wait_for(asyncio.gather(*(replies.wait(key) for key in keys)), timeout=10)
        await replies.close()
        return subscribers, answers

    subscribers, answers = asyncio.run(scenario())
    assert subscribers == [(replies.channel.encode(), 1)]
    assert answers == [{"n": n} for n in range(200)]

"""An interactive task sent in one LPUSH is the message Celery would have sent.

Both are taken off the queue's Redis list and compared field by field: only
what is new for every message (ids, delivery tag, the expiry's instant) may
differ. Real workers taking these messages are tested wherever a
production-mode test classifies (tests/api, tests/worker, tests/jobs).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

import redis

from shared.flows.queue import CLASSIFY_TASK, INTERACTIVE_QUEUE, RUN_CHUNK_TASK
from shared.settings import Settings
from tests.conftest import REDIS_URL
from worker.celery_app import TaxonomistCelery, make_celery

ARGS = ({"product": "Chef knife", "taxonomy": "google"}, "a-hold", "a-channel:a-request", False)
OPTIONS = {
    "queue": INTERACTIVE_QUEUE,
    "expires": 30.0,
    "argsrepr": "(taxonomy='google', reservation='a-hold')",
    "ignore_result": True,
}
PER_MESSAGE = {"id", "root_id", "correlation_id", "delivery_tag", "expires", "reply_to"}


def _app(prefix: str) -> TaxonomistCelery:
    return make_celery(Settings(celery_broker_url=REDIS_URL, redis_url=REDIS_URL, redis_namespace=prefix))


def _taken(client: redis.Redis, prefix: str) -> dict:
    raw = client.rpop(f"{prefix}:{INTERACTIVE_QUEUE}")
    assert raw is not None, "nothing on the queue's list"
    return json.loads(raw)


def _without(fields: dict) -> dict:
    return {name: value for name, value in fields.items() if name not in PER_MESSAGE}


def test_the_direct_message_is_celerys_own(redis_prefix):
    app = _app(redis_prefix)
    assert app.direct_sender is not None
    client = redis.Redis.from_url(REDIS_URL)
    try:
        sent_id = app.send_task(CLASSIFY_TASK, args=ARGS, **OPTIONS)
        direct = _taken(client, redis_prefix)
        sender, app.direct_sender = app.direct_sender, None
        app.send_task(CLASSIFY_TASK, args=ARGS, **OPTIONS)
        celerys = _taken(client, redis_prefix)
        app.direct_sender = sender
    finally:
        app.close()
    assert direct["headers"]["id"] == sent_id
    assert set(direct) == set(celerys)
    assert _without(direct["headers"]) == _without(celerys["headers"])
    assert _without(direct["properties"]) == _without(celerys["properties"])
    assert list(direct["headers"]) == list(celerys["headers"])
    for message in (direct, celerys):
        assert message["headers"]["root_id"] == message["headers"]["id"]
        assert message["properties"]["correlation_id"] == message["headers"]["id"]
    assert direct["properties"]["delivery_tag"] != celerys["properties"]["delivery_tag"]
    assert {name: direct[name] for name in ("content-type", "content-encoding")} == {
        name: celerys[name] for name in ("content-type", "content-encoding")
    }
    assert base64.b64decode(direct["body"]) == base64.b64decode(celerys["body"])
    expires = datetime.fromisoformat(direct["headers"]["expires"])
    assert expires.tzinfo is not None and expires.utcoffset() == timedelta(0)
    assert abs(expires - datetime.fromisoformat(celerys["headers"]["expires"])) < timedelta(seconds=5)
    assert abs(expires - datetime.now(timezone.utc) - timedelta(seconds=30)) < timedelta(seconds=5)


def test_other_sends_go_through_celery(redis_prefix, monkeypatch):
    app = _app(redis_prefix)
    sent = []
    assert app.direct_sender is not None
    monkeypatch.setattr(app.direct_sender, "send", lambda *args, **kwargs: sent.append(args))
    client = redis.Redis.from_url(REDIS_URL)
    try:
        # Another queue, keyword arguments, an option the direct path does not know.
        app.send_task(RUN_CHUNK_TASK, args=(1, 0, 0, 1), queue="bulk", argsrepr="chunk")
        app.send_task(CLASSIFY_TASK, args=ARGS[:3], kwargs={"with_candidates": True}, **OPTIONS)
        app.send_task(CLASSIFY_TASK, args=ARGS, countdown=1, **OPTIONS)
        assert client.llen(f"{redis_prefix}:bulk") == 1
        assert client.llen(f"{redis_prefix}:{INTERACTIVE_QUEUE}") == 2
    finally:
        app.close()
    assert sent == []


def test_only_a_redis_broker_gets_the_direct_path():
    assert make_celery(Settings()).direct_sender is None
    assert make_celery(Settings(celery_broker_url="memory://")).direct_sender is None
    assert make_celery(Settings(celery_broker_url="amqp://guest@localhost//")).direct_sender is None

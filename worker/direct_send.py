"""Sending an interactive task with one Redis LPUSH, the message Celery would have built.

Celery's `send_task` builds the task message (protocol 2), hands it to kombu,
which serialises it, copies and declares the queue, wraps the message in the
Redis transport's envelope and LPUSHes it onto the queue's list: about a
quarter of the front's CPU per synchronous request (docs/throughput.md).
`DirectSender` writes the same message itself, with only the per-request
fields (task id, arguments, expiry, delivery tag) new each time, and LPUSHes
it onto the same list. The worker, its acknowledgements and Flower see what
they saw before: `tests/worker/test_direct_send.py` compares the two
messages field by field, and every production-mode test runs its
classifications through this path to real Celery workers.

Only for a Redis broker (`redis://`, `rediss://`), messages of priority 0
(the queue's own list, no priority suffix), and sends that pass nothing
beyond the options below: anything else goes through Celery.
"""

from __future__ import annotations

import base64
import os
import threading
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import redis
from celery.utils.nodenames import anon_nodename
from kombu.utils.json import dumps

from shared.redis_pool import RedisPoolLimits

# What `send_task` may be given for the direct path (queue and argsrepr
# required); other options go to Celery.
DIRECT_OPTIONS = frozenset({"queue", "expires", "argsrepr", "ignore_result"})
# A send that cannot reach Redis fails within this (the caller refunds).
SEND_TIMEOUT_SECONDS = 5.0
_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def accepts_url(broker_url: str) -> bool:
    return broker_url.startswith(("redis://", "rediss://"))


class DirectSender:
    """LPUSHes Celery protocol-2 task messages onto `<key prefix><queue>` lists."""

    def __init__(self, broker_url: str, key_prefix: str, pool: RedisPoolLimits) -> None:
        self._url = broker_url
        self._key_prefix = key_prefix
        self._pool = pool
        self._client: redis.Redis | None = None
        self._pid = 0
        self._origin = ""
        self._lock = threading.Lock()

    def send(
        self,
        name: str,
        args: Any,
        queue: str,
        *,
        expires: float | None = None,
        argsrepr: str,
        ignore_result: bool = False,
        reply_to: str = "",
    ) -> str:
        """Send task `name` with positional `args` to `queue`; its task id."""
        client = self._connected()
        task_id = str(uuid.uuid4())
        expires_at = (
            None
            if expires is None
            else (datetime.now(timezone.utc) + timedelta(seconds=expires)).isoformat()
        )
        args = list(args or ())
        headers: dict[str, Any] = {
            "lang": "py",
            "task": name,
            "id": task_id,
            "shadow": None,
            "eta": None,
            "expires": expires_at,
            "group": None,
            "group_index": None,
            "retries": 0,
            "timelimit": [None, None],
            "root_id": task_id,
            "parent_id": None,
            "argsrepr": argsrepr,
            "kwargsrepr": "{}",
            "origin": self._origin,
            "ignore_result": ignore_result,
            "replaced_task_nesting": 0,
            "stamped_headers": None,
            "stamps": {},
        }
        properties: dict[str, Any] = {
            "correlation_id": task_id,
            "reply_to": reply_to,
            # Celery passes its send options on as message properties.
            "argsrepr": argsrepr,
            "delivery_mode": 2,
        }
        if expires is not None:
            properties["expiration"] = str(int(expires * 1000))
        properties["delivery_info"] = {"exchange": "", "routing_key": queue}
        properties["priority"] = 0
        properties["body_encoding"] = "base64"
        properties["delivery_tag"] = str(uuid.uuid4())
        body = dumps([args, {}, _EMBED]).encode()
        envelope = {
            "body": base64.b64encode(body).decode(),
            "content-encoding": "utf-8",
            "content-type": "application/json",
            "headers": headers,
            "properties": properties,
        }
        client.lpush(f"{self._key_prefix}{queue}", dumps(envelope))
        return task_id

    def _connected(self) -> redis.Redis:
        # One client per process: a forked process builds its own.
        client = self._client
        if client is None or self._pid != os.getpid():
            with self._lock:
                client = self._client
                if client is None or self._pid != os.getpid():
                    client = self._pool.sync_client(
                        self._url,
                        socket_timeout=SEND_TIMEOUT_SECONDS,
                        socket_connect_timeout=SEND_TIMEOUT_SECONDS,
                    )
                    self._origin = anon_nodename()
                    self._client, self._pid = client, os.getpid()
        return client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

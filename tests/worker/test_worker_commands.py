"""The two ways to start a worker: `celery -A worker.celery_app worker` and `taxonomist worker`."""

from __future__ import annotations

import re
import time
import uuid

import httpx

from tests.conftest import balance_of, delete_redis_keys, make_customer, production_env
from tests.servers import Process, Service

ENDPOINT = "/api/v1/products/categorize"
READY_TIMEOUT_SECONDS = 120
# Celery's log line once the worker, under the name it was given, consumes.
READY = re.compile(r"INFO/MainProcess\] named@\S+ ready\.")


def test_celery_command_settles_requests_and_taxonomist_worker_passes_options_on(
    tmp_path, postgres_url, built_indexes
):
    namespace = f"taxonomist-test-{uuid.uuid4().hex[:8]}"
    env = production_env(postgres_url, namespace)
    # Started by Celery's own command, this worker imports only worker.celery_app
    # and what it includes: the models must all come with it.
    plain = Process(
        ["-A", "worker.celery_app", "worker", "-Q", "interactive", "-c", "1", "-n", "plain@%h"],
        env,
        tmp_path / "celery.log",
        module="celery",
    )
    # Options of Celery's that `taxonomist worker` does not declare itself.
    named = Process(
        ["worker", "-Q", "bulk", "-c", "1", "-n", "named@%h", "--without-gossip"],
        env,
        tmp_path / "named.log",
    )
    front = Service(env, tmp_path / "front.log")
    try:
        customer = make_customer(postgres_url, monthly=1)
        response = httpx.post(
            front.url + ENDPOINT,
            json={"product": "Stainless steel chef knife", "fallbackToBestGuess": True},
            headers=customer.headers,
            timeout=60,
        )
        assert response.status_code == 200, (response.text, plain.log()[-2000:])
        assert balance_of(postgres_url, customer.account_id).total == 0
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while not READY.search(named.log()) and named.popen.poll() is None:
            assert time.monotonic() < deadline, named.log()
            time.sleep(0.2)
        assert READY.search(named.log()), named.log()
    finally:
        for process in (front, plain, named):
            process.stop()
        delete_redis_keys(namespace)

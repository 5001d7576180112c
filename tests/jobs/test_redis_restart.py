"""Redis restarted under a running job: the sweep outlives the outage and the job completes.

A private redis-server without persistence, so its restart loses the queued
chunks as a crashed Redis does; its own PostgreSQL database, so that no other
stack's sweep can finish the job in its place.
"""

from __future__ import annotations

import time
import uuid

import pytest

from tests.conftest import fresh_postgres_database
from tests.jobs.conftest import JobStack, job_stack_env, start_job_stack, stop_job_stack
from tests.jobs.test_jobs_api import csv_body
from tests.servers import RedisServer

ITEMS = 400
OUTAGE_SECONDS = 3
# The front's pooled Redis connections died with the server: the first
# requests after the restart may still meet one (a 500, as the contract
# allows for an infrastructure disruption) before the pool renews itself.
FRONT_RECOVERY_SECONDS = 15


@pytest.fixture
def restartable_stack(tmp_path, built_indexes):
    redis_server = RedisServer(tmp_path)
    with fresh_postgres_database() as database_url:
        namespace = f"taxonomist-restart-{uuid.uuid4().hex[:8]}"
        stack = start_job_stack(job_stack_env(database_url, redis_server.url, namespace), tmp_path, 1)
        try:
            yield stack, redis_server
        finally:
            stop_job_stack(stack)
            redis_server.stop()


def test_a_job_completes_with_exact_credits_after_redis_restarts_under_it(restartable_stack):
    stack, redis_server = restartable_stack
    customer = stack.customer(monthly=ITEMS + 3)
    job_id = stack.submit(customer, csv_body(ITEMS), "text/csv").json()["id"]
    stack.wait(customer, job_id, until=lambda job: job["counts"]["done"] >= 20)
    redis_server.stop()
    time.sleep(OUTAGE_SECONDS)  # several sweep intervals fail on Redis meanwhile
    redis_server.start()
    _until_the_front_answers_again(stack, customer, job_id)
    job = stack.wait(customer, job_id)
    assert job["status"] == "completed", stack.workers[0].log()[-3000:]
    assert job["counts"]["done"] == ITEMS and job["counts"]["failed"] == 0
    assert job["credits"] == {"held": ITEMS, "consumed": ITEMS, "refunded": 0}
    assert stack.balance(customer).total == 3
    assert stack.beat is not None and stack.beat.popen.poll() is None, stack.beat.log()[-3000:]


def _until_the_front_answers_again(stack: JobStack, customer, job_id: str) -> None:
    deadline = time.monotonic() + FRONT_RECOVERY_SECONDS
    with stack.client() as client:
        while time.monotonic() < deadline:
            if client.get(f"/api/v1/jobs/{job_id}", headers=customer.headers).status_code == 200:
                return
            time.sleep(0.2)
    raise AssertionError("the front did not recover from the Redis restart")

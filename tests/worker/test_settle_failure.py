"""A worker that cannot settle the credit has answered already (it answers before it
charges): the client gets its 200 at once and is not charged; the credit, left
reserved, goes back with the stale sweep."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx
from sqlalchemy import update

from shared.credits import service as credits
from shared.credits.models import CreditHold
from shared.db.base import utcnow
from shared.db.session import Database
from tests.conftest import Stack, delete_redis_keys
from tests.servers import Process, Service

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = {"product": "Stainless steel chef knife, 8 inch", "fallbackToBestGuess": True}
# A port nothing listens on: the worker's database refuses every connection.
UNREACHABLE_DATABASE_URL = "postgresql://postgres@127.0.0.1:1/taxonomist"
WORKER_START_SECONDS = 120


def wait_ready(worker: Process) -> None:
    deadline = time.monotonic() + WORKER_START_SECONDS
    while " ready." not in worker.log():
        assert worker.popen.poll() is None and time.monotonic() < deadline, worker.log()
        time.sleep(0.2)


def test_a_worker_without_its_database_answers_at_once_and_charges_nothing(production: Stack, tmp_path):
    # A queue of their own, so that only this worker takes the task.
    env = dict(production.env, REDIS_NAMESPACE=f"{production.env['REDIS_NAMESPACE']}-no-db")
    worker = Process(
        ["worker", "--concurrency", "1"], dict(env, DATABASE_URL=UNREACHABLE_DATABASE_URL),
        tmp_path / "worker.log",
    )
    front = Service(env, tmp_path / "front.log")
    try:
        wait_ready(worker)
        customer = production.customer(monthly=1)
        started = time.monotonic()
        response = httpx.post(front.url + ENDPOINT, json=PRODUCT, headers=customer.headers, timeout=60)
        elapsed = time.monotonic() - started
    finally:
        front.stop()
        worker.stop()
        delete_redis_keys(env["REDIS_NAMESPACE"])
    assert response.status_code == 200 and response.json()["success"] is True
    # Well before CLASSIFY_TIMEOUT_SECONDS (30 s): the worker answered before settling.
    assert elapsed < 10
    assert "could not settle reservation" in worker.log()
    assert production.balance(customer).total == 0
    database = Database(production.database_url)
    try:
        with database.session() as session:
            # As if the request's deadline (its hold's expiry) had passed.
            session.execute(
                update(CreditHold)
                .where(CreditHold.account_id == customer.account_id)
                .values(expires_at=utcnow() - timedelta(seconds=1))
            )
        with database.session() as session:
            assert credits.expire_stale(session) >= 1
    finally:
        database.dispose()
    assert production.balance(customer).total == 1

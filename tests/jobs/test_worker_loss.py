"""A worker killed with SIGKILL mid-job: nothing lost, nothing charged twice."""

from __future__ import annotations

import json
import signal

from sqlalchemy import func, select

from shared.credits.models import PAID_OUTCOMES, UsageRecord
from shared.db.session import Database
from tests.jobs.test_jobs_api import csv_body

ITEMS = 2_000


def test_a_job_survives_a_worker_killed_mid_chunk(jobs_stack):
    customer = jobs_stack.customer(monthly=ITEMS + 7)
    job_id = jobs_stack.submit(customer, csv_body(ITEMS), "text/csv").json()["id"]
    jobs_stack.wait(customer, job_id, until=lambda job: job["counts"]["done"] >= 100)
    victim = jobs_stack.workers[0]
    victim.stop(signal.SIGKILL)
    try:
        job = jobs_stack.wait(customer, job_id)
    finally:
        jobs_stack.workers.remove(victim)
        jobs_stack.start_worker()
    assert job["status"] == "completed"
    assert job["counts"]["done"] == ITEMS and job["counts"]["failed"] == 0
    assert job["credits"] == {"held": ITEMS, "consumed": ITEMS, "refunded": 0}
    results = [json.loads(line) for line in jobs_stack.results(customer, job_id).text.splitlines()]
    assert [result["id"] for result in results] == [f"item-{n}" for n in range(ITEMS)]
    assert jobs_stack.balance(customer).total == 7
    database = Database(jobs_stack.database_url)
    try:
        with database.session() as session:
            consumed = session.scalar(
                select(func.sum(UsageRecord.count)).where(
                    UsageRecord.account_id == customer.account_id,
                    UsageRecord.outcome.in_(PAID_OUTCOMES),
                )
            )
    finally:
        database.dispose()
    assert consumed == ITEMS

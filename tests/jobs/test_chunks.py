"""The job state machine on SQLite and PostgreSQL: every item ends once, counters and credits agree."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.accounts import service as accounts
from shared.classification.models import ClassificationRequest
from shared.credits import service as credits
from shared.jobs import actions, chunks, submission
from shared.jobs.chunks import ItemEnd
from shared.jobs.errors import JobNotFound
from shared.jobs.models import ITEM_DONE, ITEM_FAILED
from shared.jobs.parsing import JobInput, ParsedItem
from shared.jobs.state import chunk_of

FOUND = {"success": True, "categoryFound": True, "categoryId": "1"}
DEADLINE_SECONDS = 3600


def job_input(count: int) -> JobInput:
    return JobInput(
        items=[
            ParsedItem(f"i{n}", ClassificationRequest(product=f"product {n % 3}"), None)
            for n in range(count)
        ]
    )


@pytest.fixture
def account_id(database) -> int:
    with database.session() as session:
        account = accounts.create_account(session, "jobs@example.test")
        credits.open_balance(session, account.id, monthly_allowance=4, topup=6)
        return account.id


def submit(database, account_id, count=6):
    return submission.submit(
        database,
        account_id,
        job_input(count),
        idempotency_key=None,
        chunk_size=3,
        chunks_in_flight=1,
        deadline_seconds=DEADLINE_SECONDS,
    )


def test_a_chunk_delivered_twice_ends_its_items_once(database, account_id):
    job, (chunk,) = submit(database, account_id)
    with database.session() as session:
        claimed = chunks.claim_chunk(session, chunk, "task-1")
        # The same task redelivered after its process died claims the same items again.
        assert [item.position for item in chunks.claim_chunk(session, chunk, "task-1")] == [0, 1, 2]
        assert chunks.claim_chunk(session, chunk, "task-2") == []
    assert [item.duplicate_of for item in claimed] == [None, None, None]
    ends = [
        ItemEnd(0, ITEM_DONE, FOUND),
        ItemEnd(1, ITEM_FAILED, {"success": False, "error": "boom"}),
        ItemEnd(2, ITEM_DONE, FOUND),
    ]
    for _ in range(2):
        with database.session() as session:
            next_chunks = chunks.settle_chunk(session, chunk, ends, release=[])
    assert next_chunks == []  # the second settlement changed nothing and sends nothing
    with database.session() as session:
        job = actions.get(session, account_id, job.id)
        assert (job.done, job.found, job.failed, job.next_chunk) == (2, 2, 1, 2)
        # 6 held (4 monthly, 2 top-up), 1 refunded: top-up credits come back first.
        balance = credits.show(session, account_id)
        assert (balance.monthly, balance.topup) == (0, 5)


def test_cancel_refunds_queued_items_and_the_job_ends_when_running_ones_finish(database, account_id):
    job, (chunk,) = submit(database, account_id)
    with database.session() as session:
        chunks.claim_chunk(session, chunk, "task-1")
        cancelled = actions.cancel(session, account_id, job.id)
        assert (cancelled.status, cancelled.cancelled) == ("cancelling", 3)
    with database.session() as session:
        chunks.settle_chunk(session, chunk, [ItemEnd(n, ITEM_DONE, FOUND) for n in range(3)], [])
        job = actions.get(session, account_id, job.id)
        assert (job.status, job.done, job.refunded) == ("cancelled", 3, 3)
        assert credits.show(session, account_id).total == 10 - 3
        with pytest.raises(JobNotFound):
            actions.get(session, account_id + 1, job.id)


def test_identical_requests_point_at_their_first_occurrence(database, account_id):
    job, (chunk,) = submit(database, account_id)
    with database.session() as session:
        chunks.claim_chunk(session, chunk, "task-1")
        chunks.settle_chunk(session, chunk, [ItemEnd(n, ITEM_DONE, FOUND) for n in range(3)], [])
        later = chunk_of(job, 1)
        items = chunks.claim_chunk(session, later, "task-2")
        assert [item.duplicate_of for item in items] == [0, 1, 2]
        assert chunks.known_answers(session, job.id, {0, 1, 2}) == {0: FOUND, 1: FOUND, 2: FOUND}


def test_a_job_keeps_the_deadline_it_was_submitted_with(database, account_id):
    job, _ = submit(database, account_id)
    with database.session() as session:
        deadline = chunks.deadline_of(session, job.id)
        assert deadline == actions.get(session, account_id, job.id).created_at + timedelta(
            seconds=DEADLINE_SECONDS
        )
        assert chunks.deadline_of(session, "job_" + "0" * 32) is None

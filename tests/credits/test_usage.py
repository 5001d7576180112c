"""Usage by outcome for bulk jobs: counted right, and no ledger row per item."""

from __future__ import annotations

from sqlalchemy import func, select

from api.job_view import job_view
from shared.accounts import service as accounts
from shared.classification.messages import INTERNAL_ERROR, RATE_LIMITED
from shared.classification.models import ClassificationRequest
from shared.credits import service as credits
from shared.credits import usage
from shared.credits.models import CreditHold, LedgerEntry, UsageRecord
from shared.jobs import actions, chunks, submission
from shared.jobs.models import ITEM_DONE, ITEM_FAILED
from shared.jobs.parsing import JobInput, ParsedItem
from shared.jobs.chunks import ItemEnd

BIG_JOB = 10_000
CHUNK = 1_000
FOUND = {"success": True, "categoryFound": True, "categoryId": "1"}
NOT_FOUND = {"success": True, "categoryFound": False}


def submit(database, account_id: int, items: int, chunk_size: int):
    job_input = JobInput(
        items=[ParsedItem(f"i{n}", ClassificationRequest(product=f"product {n}"), None) for n in range(items)]
    )
    return submission.submit(
        database,
        account_id,
        job_input,
        idempotency_key=None,
        chunk_size=chunk_size,
        chunks_in_flight=1,
        deadline_seconds=3600,
    )


def run(database, chunk, end_of) -> list:
    """Claim the chunk and settle each item as `end_of(position)` says; the next chunks."""
    with database.session() as session:
        claimed = chunks.claim_chunk(session, chunk, "task")
    with database.session() as session:
        return chunks.settle_chunk(session, chunk, [end_of(item.position) for item in claimed], [])


def ledger_rows(database, account_id: int) -> int:
    with database.session() as session:
        return session.scalar(select(func.count()).where(LedgerEntry.account_id == account_id))


def new_account(database, monthly: int) -> int:
    with database.session() as session:
        account_id = accounts.create_account(session, "bulk-usage@example.test").id
        credits.open_balance(session, account_id, monthly_allowance=monthly)
        return account_id


def test_a_big_job_writes_no_ledger_row_per_item_and_counts_by_outcome(database):
    account_id = new_account(database, monthly=BIG_JOB + 1)
    job, chunks = submit(database, account_id, BIG_JOB, CHUNK)
    assert ledger_rows(database, account_id) == 2  # the grant, the hold
    while chunks:
        chunks = run(
            database,
            chunks[0],
            lambda position: ItemEnd(position, ITEM_DONE, FOUND if position % 4 else NOT_FOUND),
        )
    with database.session() as session:
        assert actions.get(session, account_id, job.id).status == "completed"
        held = session.get(CreditHold, job.hold_id)
        assert (held.consumed, held.refunded) == (BIG_JOB, 0)
        today = usage.daily_usage(session, account_id)[-1]
        assert (today.found, today.not_found, today.total) == (7_500, 2_500, BIG_JOB)
        # One usage row per outcome per chunk.
        assert session.scalar(select(func.count()).where(UsageRecord.account_id == account_id)) == 20
        assert usage.cycle_usage(session, account_id, credits.show(session, account_id).renews_at) == BIG_JOB
        assert credits.show(session, account_id).total == 1
    # Settling paid items moved no money: still the grant and the hold only.
    assert ledger_rows(database, account_id) == 2


def test_failed_rate_limited_and_cancelled_items_count_apart(database):
    account_id = new_account(database, monthly=100)
    job, (first, *_) = submit(database, account_id, 100, 50)

    def end_of(position: int) -> ItemEnd:
        if position < 10:
            return ItemEnd(position, ITEM_FAILED, {"success": False, "error": INTERNAL_ERROR})
        if position < 30:
            return ItemEnd(position, ITEM_FAILED, {"success": False, "error": RATE_LIMITED})
        return ItemEnd(position, ITEM_DONE, FOUND)

    with database.session() as session:
        claimed = chunks.claim_chunk(session, first, "task")
        # The second chunk's 50 items are still queued when the caller cancels.
        actions.cancel(session, account_id, job.id)
    with database.session() as session:
        chunks.settle_chunk(session, first, [end_of(item.position) for item in claimed], [])
    with database.session() as session:
        today = usage.daily_usage(session, account_id)[-1]
        view = job_view(actions.get(session, account_id, job.id))
        balance = credits.show(session, account_id)
    assert (today.found, today.not_found, today.failed, today.rate_limited, today.cancelled) == (20, 0, 10, 20, 50)
    assert view["status"] == "cancelled"
    assert view["credits"] == {"held": 100, "consumed": 20, "refunded": 80}
    assert balance.monthly == 80
    # The grant, the hold, and one refund each for the cancelled, failed and rate-limited items.
    assert ledger_rows(database, account_id) == 5

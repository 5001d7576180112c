"""Migration 0004 on a database with balances, reservations, jobs and a ledger already."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from shared.credits import service as credits
from shared.credits import usage
from shared.credits.models import OUTCOME_FAILED, CreditBalance, CreditHold, LedgerEntry, UsageRecord
from shared.db.base import UTCDateTime
from shared.db.migrate import alembic_config
from shared.db.models import metadata
from shared.db.session import Database
from shared.jobs.models import Job
from tests.conftest import fresh_postgres_database

OPENED = datetime(2025, 1, 31, 9, 30, tzinfo=timezone.utc)
# Chained renewals drifted to the 28th; the anchor puts the cycle's end back on the 31st.
DRIFTED_RENEWAL = datetime(2035, 3, 28, 9, 30, 0, 4000, tzinfo=timezone.utc)
ANCHORED_RENEWAL = datetime(2035, 3, 31, 9, 30, tzinfo=timezone.utc)
YESTERDAY = datetime.now(timezone.utc) - timedelta(days=1)


def old_table(name: str, *columns: str, moments: tuple[str, ...] = ()):
    return sa.table(name, *(sa.column(c) for c in columns), *(sa.column(m, UTCDateTime) for m in moments))


def fill_revision_0003(connection) -> None:
    rows = {
        old_table("accounts", "id", "email", moments=("created_at",)): [
            {"id": 1, "email": "old@example.test", "created_at": OPENED}
        ],
        old_table("credit_balances", "account_id", "monthly", "monthly_allowance", "topup", moments=("renews_at",)): [
            {"account_id": 1, "monthly": 3, "monthly_allowance": 10, "topup": 1, "renews_at": DRIFTED_RENEWAL}
        ],
        old_table("credit_reservations", "id", "account_id", "source", "status",
                  moments=("renews_at", "created_at")): [
            {"id": "open", "account_id": 1, "source": "monthly", "status": "reserved",
             "renews_at": DRIFTED_RENEWAL, "created_at": YESTERDAY},
            {"id": "ended", "account_id": 1, "source": "topup", "status": "consumed",
             "renews_at": DRIFTED_RENEWAL, "created_at": YESTERDAY},
        ],
        old_table("jobs", "id", "account_id", "status", "total", "done", "found", "not_found", "failed",
                  "cancelled", "hold_monthly", "hold_topup", "chunk_size", "next_chunk",
                  moments=("hold_renews_at", "created_at", "progressed_at")): [
            {"id": "job_1", "account_id": 1, "status": "running", "total": 6, "done": 3, "found": 2,
             "not_found": 1, "failed": 1, "cancelled": 0, "hold_monthly": 4, "hold_topup": 2,
             "chunk_size": 3, "next_chunk": 2, "hold_renews_at": DRIFTED_RENEWAL,
             "created_at": YESTERDAY, "progressed_at": YESTERDAY},
        ],
        old_table("credit_ledger", "account_id", "kind", "monthly_delta", "topup_delta", "reservation_id",
                  "note", moments=("created_at",)): [
            {"account_id": 1, "kind": kind, "monthly_delta": monthly, "topup_delta": topup,
             "reservation_id": reservation, "note": note, "created_at": YESTERDAY}
            for kind, monthly, topup, reservation, note in [
                ("grant", 10, 2, None, "account opened"),
                ("reserve", -1, 0, "open", None),
                ("reserve", 0, -1, "ended", None),
                ("consume", 0, 0, "ended", "found"),
                ("reserve", -4, -2, None, "bulk job job_1"),
                ("consume", 0, 0, None, "found"),
                ("consume", 0, 0, None, "found"),
                ("consume", 0, 0, None, "not found"),
                ("refund", 0, 1, None, "bulk job job_1: 1 failed"),
            ]
        ],
    }
    for table, values in rows.items():
        connection.execute(table.insert(), values)


def check_upgrade_moves_holds_and_usage(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0003")
            fill_revision_0003(connection)
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), metadata) == []
    finally:
        engine.dispose()
    database = Database(url)
    try:
        with database.session() as session:
            check_migrated(session)
    finally:
        database.dispose()


def check_migrated(session) -> None:
    balance = session.get(CreditBalance, 1)
    assert (balance.opened_at, balance.renews_at) == (OPENED, ANCHORED_RENEWAL)
    reservation = session.get(CreditHold, "open")
    assert (reservation.monthly, reservation.topup, reservation.consumed, reservation.refunded) == (1, 0, 0, 0)
    assert reservation.renews_at == ANCHORED_RENEWAL
    assert reservation.expires_at == YESTERDAY + timedelta(minutes=15)
    assert session.get(CreditHold, "ended") is None
    job = session.get(Job, "job_1")
    job_hold = session.get(CreditHold, job.hold_id)
    assert (job_hold.monthly, job_hold.topup, job_hold.consumed, job_hold.refunded) == (4, 2, 3, 1)
    assert job_hold.expires_at is None and job_hold.renews_at == ANCHORED_RENEWAL
    assert job.deadline_at == YESTERDAY + timedelta(hours=24)
    kinds = [entry.kind for entry in session.scalars(sa.select(LedgerEntry).order_by(LedgerEntry.id))]
    assert kinds == ["grant", "hold", "hold", "hold", "refund"]
    assert session.scalar(sa.select(LedgerEntry.hold_id).where(LedgerEntry.id == 2)) == "open"
    # By date, not position: a run that crosses midnight moves "yesterday" in the chart.
    (day,) = [day for day in usage.daily_usage(session, 1) if day.day == YESTERDAY.date()]
    assert (day.found, day.not_found, day.failed) == (3, 1, 1)
    assert session.scalar(sa.select(sa.func.sum(UsageRecord.count))) == 5
    # The moved reservation is a hold of this cycle: its refund goes back to the monthly credits.
    assert credits.refund(session, "open", OUTCOME_FAILED) is True
    assert credits.show(session, 1).monthly == 4


def test_sqlite_upgrade_moves_holds_and_usage(tmp_path):
    check_upgrade_moves_holds_and_usage(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_postgresql_upgrade_moves_holds_and_usage():
    with fresh_postgres_database() as url:
        check_upgrade_moves_holds_and_usage(url)

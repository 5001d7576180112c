"""Usage read from the ledger, the chart drawn from it, and password hashing."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from api.dashboard.chart import CHART_HEIGHT, usage_bars
from shared.accounts import service as accounts
from shared.accounts.passwords import hash_password, verify_password
from shared.credits import service as credits
from shared.credits import usage
from shared.credits.models import NOTE_FOUND, NOTE_NOT_FOUND, LedgerEntry
from shared.db.base import utcnow


def spend(session, account_id: int, *notes: str | None) -> None:
    """One classification per note: consumed with that note, or refunded for None."""
    for note, reservation_id in zip(notes, credits.reserve(session, account_id, len(notes))):
        if note is None:
            credits.refund(session, reservation_id)
        else:
            credits.consume(session, reservation_id, note)


def test_daily_usage_counts_found_not_found_and_failed_per_day(database):
    with database.session() as session:
        account = accounts.create_account(session, "usage@example.test")
        credits.open_balance(session, account.id, monthly_allowance=10, topup=5)
        spend(session, account.id, NOTE_FOUND, NOTE_FOUND, NOTE_NOT_FOUND, None)
        session.flush()
        # Move one found classification to three days ago, and another out of the window.
        found = [e.id for e in session.query(LedgerEntry).filter_by(note=NOTE_FOUND)]
        for entry_id, age in zip(found, (3, 40)):
            session.execute(
                update(LedgerEntry)
                .where(LedgerEntry.id == entry_id)
                .values(created_at=utcnow() - timedelta(days=age))
            )
        days = usage.daily_usage(session, account.id)
        kinds = [entry.kind for entry in usage.credit_entries(session, account.id)]
        credits.top_up(session, account.id, 7, note="operator")
        newest_first = [entry.kind for entry in usage.credit_entries(session, account.id)]

    assert len(days) == usage.CHART_DAYS and days[-1].day == utcnow().date()
    assert (days[-1].found, days[-1].not_found, days[-1].failed) == (0, 1, 1)
    assert days[-4].found == 1
    assert sum(day.total for day in days) == 3
    assert kinds == ["grant"] and newest_first == ["topup", "grant"]


def test_cycle_usage_counts_what_was_paid_since_the_cycle_began(database):
    with database.session() as session:
        account = accounts.create_account(session, "cycle@example.test")
        credits.open_balance(session, account.id, monthly_allowance=10)
        spend(session, account.id, NOTE_FOUND, NOTE_NOT_FOUND, None)
        balance = credits.show(session, account.id)
        assert usage.cycle_usage(session, account.id, balance.renews_at) == 2
        # A cycle that began after these classifications has used nothing yet.
        later = credits.add_months(balance.renews_at, 1)
        assert usage.cycle_usage(session, account.id, later) == 0


def test_the_busiest_day_fills_the_chart_and_empty_days_draw_nothing():
    days = [usage.DayUsage(utcnow().date() - timedelta(days=n)) for n in (2, 1, 0)]
    days[1] = usage.DayUsage(days[1].day, found=2, not_found=1, failed=1)
    days[2] = usage.DayUsage(days[2].day, found=1)
    bars = usage_bars(days)
    assert bars[0].segments == []
    assert [s.kind for s in bars[1].segments] == ["found", "not_found", "failed"]
    assert sum(s.height for s in bars[1].segments) == CHART_HEIGHT
    assert bars[1].segments[-1].y == 0
    assert bars[2].segments[0].height == CHART_HEIGHT / 4
    assert "2 found, 1 not found, 1 failed" in bars[1].label


def test_passwords_verify_only_against_their_own_hash():
    stored = hash_password("correct horse battery")
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    assert verify_password(stored, "correct horse battery")
    assert not verify_password(stored, "Correct horse battery")
    assert not verify_password(None, "correct horse battery")
    assert not verify_password("not a hash", "correct horse battery")


def test_a_bulk_refund_counts_every_classification_it_gives_back(database):
    with database.session() as session:
        account = accounts.create_account(session, "bulk@example.test")
        credits.open_balance(session, account.id, monthly_allowance=10)
        held = credits.hold(session, account.id, 5, note="bulk job test")
        credits.refund_held(session, account.id, held, 0, 3, note="bulk job test: 3 failed")
        assert usage.daily_usage(session, account.id)[-1].failed == 3

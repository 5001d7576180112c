"""Usage by outcome, the chart drawn from it, and password hashing."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from api.dashboard.chart import CHART_HEIGHT, usage_bars
from shared.accounts import service as accounts
from shared.accounts.passwords import hash_password, verify_password
from shared.credits import service as credits
from shared.credits import usage
from shared.credits.models import (
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    OUTCOME_NOT_FOUND,
    UsageRecord,
)
from shared.credits.cycle import boundary
from shared.db.base import utcnow


def spend(session, account_id: int, *outcomes: str) -> None:
    """One synchronous classification per outcome: consumed, or refunded if it failed."""
    for outcome in outcomes:
        held = credits.hold(session, account_id)
        if outcome == OUTCOME_FAILED:
            credits.refund(session, held.id, outcome)
        else:
            credits.consume(session, held.id, outcome)


def test_daily_usage_counts_found_not_found_and_failed_per_day(database):
    with database.session() as session:
        account = accounts.create_account(session, "usage@example.test")
        credits.open_balance(session, account.id, monthly_allowance=10, topup=5)
        spend(session, account.id, OUTCOME_FOUND, OUTCOME_FOUND, OUTCOME_NOT_FOUND, OUTCOME_FAILED)
        session.flush()
        # Move one found classification to three days ago, and another out of the window.
        found = [r.id for r in session.query(UsageRecord).filter_by(outcome=OUTCOME_FOUND)]
        for record_id, age in zip(found, (3, 40)):
            session.execute(
                update(UsageRecord)
                .where(UsageRecord.id == record_id)
                .values(day=utcnow().date() - timedelta(days=age))
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
        spend(session, account.id, OUTCOME_FOUND, OUTCOME_NOT_FOUND, OUTCOME_FAILED)
        balance = credits.show(session, account.id)
        assert usage.cycle_usage(session, account.id, balance.renews_at) == 2
        # A cycle that began after these classifications has used nothing yet.
        later = boundary(balance.renews_at, 1)
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
        credits.refund(session, held.id, OUTCOME_FAILED, 3)
        assert usage.daily_usage(session, account.id)[-1].failed == 3


def test_rate_limited_and_cancelled_classifications_have_their_own_segments():
    day = usage.DayUsage(utcnow().date(), found=1, rate_limited=2, cancelled=1)
    (bar,) = usage_bars([day])
    assert [s.kind for s in bar.segments] == ["found", "rate_limited", "cancelled"]
    assert sum(s.height for s in bar.segments) == CHART_HEIGHT
    assert "0 failed, 2 rate-limited, 1 cancelled" in bar.label

"""Billing cycles anchored on the opening day: no drift after a short month."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from shared.accounts import service as accounts
from shared.credits import cycle
from shared.credits import service as credits
from shared.credits.models import OUTCOME_FAILED, OUTCOME_FOUND, CreditBalance, UsageRecord

OPENED = datetime(2025, 1, 31, 9, 30, tzinfo=timezone.utc)
RENEWALS = [
    datetime(2025, 2, 28, 9, 30, tzinfo=timezone.utc),
    datetime(2025, 3, 31, 9, 30, tzinfo=timezone.utc),
    datetime(2025, 4, 30, 9, 30, tzinfo=timezone.utc),
    datetime(2025, 5, 31, 9, 30, tzinfo=timezone.utc),
]


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """The time the credit service sees, moved by the test."""
    moved = Clock(OPENED)
    monkeypatch.setattr(credits, "utcnow", moved)
    return moved


def test_an_account_opened_on_the_31st_renews_on_each_months_last_day(database, clock):
    with database.session() as session:
        account_id = accounts.create_account(session, "jan31@example.test").id
        credits.open_balance(session, account_id, monthly_allowance=3)
    renewals_seen = []
    for renewal in RENEWALS[:3]:
        with database.session() as session:
            credits.hold(session, account_id, 2)
        clock.now = renewal - timedelta(seconds=1)
        with database.session() as session:
            # Not yet renewed: what was held this cycle is still gone.
            assert credits.show(session, account_id).monthly == 1
        clock.now = renewal
        with database.session() as session:
            view = credits.show(session, account_id)
        assert view.monthly == 3
        renewals_seen.append(view.renews_at)
    assert renewals_seen == RENEWALS[1:4]


def test_a_late_visit_renews_once_onto_the_anchor(database, clock):
    with database.session() as session:
        account_id = accounts.create_account(session, "late@example.test").id
        credits.open_balance(session, account_id, monthly_allowance=3)
        credits.hold(session, account_id, 3)
    # Nobody came for two cycles: the next renewal is still on the anchor's grid.
    clock.now = datetime(2025, 4, 2, tzinfo=timezone.utc)
    with database.session() as session:
        view = credits.show(session, account_id)
    assert (view.monthly, view.renews_at) == (3, RENEWALS[2])


@pytest.mark.parametrize(
    "moment, index",
    [
        (OPENED, 0),
        (RENEWALS[0] - timedelta(microseconds=1), 0),
        (RENEWALS[0], 1),
        (datetime(2025, 3, 30, tzinfo=timezone.utc), 1),
        (RENEWALS[1], 2),
        (datetime(2026, 1, 31, 9, 30, tzinfo=timezone.utc), 12),
    ],
)
def test_cycle_index_counts_whole_months_from_the_anchor(moment, index):
    assert cycle.cycle_index(OPENED, moment) == index


def test_a_cycle_starts_at_the_previous_boundary_of_the_anchor():
    assert cycle.cycle_start(OPENED, RENEWALS[1]) == RENEWALS[0]
    assert cycle.cycle_start(OPENED, RENEWALS[0]) == OPENED
    # A renewal a moment off the grid (set before balances had an anchor) finds its cycle.
    assert cycle.cycle_start(OPENED, RENEWALS[1] + timedelta(milliseconds=3)) == RENEWALS[0]


def test_a_settlement_due_for_renewal_renews_before_its_compare_and_set(database, clock):
    with database.session() as session:
        account_id = accounts.create_account(session, "settle@example.test").id
        credits.open_balance(session, account_id, monthly_allowance=3)
        consumed = credits.hold(session, account_id).id
        refunded = credits.hold(session, account_id).id
    clock.now = RENEWALS[0]
    with database.session() as session:
        assert credits.consume(session, consumed, OUTCOME_FOUND)
    with database.session() as session:
        balance = session.get_one(CreditBalance, account_id)
        # Renewed by the consume itself, not by a later read.
        assert (balance.monthly, balance.renews_at) == (3, RENEWALS[1])
        # A credit of the last cycle comes back as nothing: the allowance is full again.
        assert credits.refund(session, refunded, OUTCOME_FAILED)
    with database.session() as session:
        outcomes = session.scalars(select(UsageRecord.outcome).where(UsageRecord.account_id == account_id))
        assert (credits.show(session, account_id).monthly, sorted(outcomes)) == (3, [OUTCOME_FAILED, OUTCOME_FOUND])

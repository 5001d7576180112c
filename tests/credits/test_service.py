"""Credits on SQLite and PostgreSQL: reservations end once, balances never go negative."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from shared.accounts import service as accounts
from shared.credits import service as credits
from shared.credits.errors import InsufficientCredits
from shared.credits.models import CreditBalance, CreditReservation, LedgerEntry
from shared.db.base import utcnow


def new_account(database, monthly=0, topup=0) -> int:
    with database.session() as session:
        account = accounts.create_account(session, f"a{monthly}-{topup}@example.test")
        credits.open_balance(session, account.id, monthly_allowance=monthly, topup=topup)
        return account.id


def ledger_totals(database, account_id) -> tuple[int, int]:
    with database.session() as session:
        return tuple(
            session.execute(
                select(func.sum(LedgerEntry.monthly_delta), func.sum(LedgerEntry.topup_delta)).where(
                    LedgerEntry.account_id == account_id
                )
            ).one()
        )


def balance(database, account_id):
    with database.session() as session:
        return credits.show(session, account_id)


def test_reserve_takes_monthly_before_top_up(database):
    account_id = new_account(database, monthly=2, topup=5)
    with database.session() as session:
        credits.reserve(session, account_id, count=3)
    view = balance(database, account_id)
    assert (view.monthly, view.topup, view.total) == (0, 4, 4)


def test_reserve_is_all_or_nothing(database):
    account_id = new_account(database, monthly=1, topup=1)
    with pytest.raises(InsufficientCredits), database.session() as session:
        credits.reserve(session, account_id, count=3)
    assert balance(database, account_id).total == 2


def test_a_reservation_ends_exactly_once(database):
    account_id = new_account(database, topup=1)
    with database.session() as session:
        (reservation,) = credits.reserve(session, account_id)
    with database.session() as session:
        assert credits.refund(session, reservation) is True
    with database.session() as session:
        assert credits.refund(session, reservation) is False
        assert credits.consume(session, reservation) is False
    assert balance(database, account_id).topup == 1


def test_refund_returns_the_credit_to_its_source(database):
    account_id = new_account(database, monthly=1, topup=1)
    with database.session() as session:
        monthly_credit, topup_credit = credits.reserve(session, account_id, count=2)
    with database.session() as session:
        credits.refund(session, topup_credit)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (0, 1)
    with database.session() as session:
        credits.refund(session, monthly_credit)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (1, 1)


def test_the_ledger_explains_every_balance(database):
    account_id = new_account(database, monthly=3, topup=2)
    with database.session() as session:
        ids = credits.reserve(session, account_id, count=4)
        credits.top_up(session, account_id, 10)
    with database.session() as session:
        credits.consume(session, ids[0], "found")
        credits.refund(session, ids[1])
        credits.refund(session, ids[3])
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (1, 12)
    assert ledger_totals(database, account_id) == (view.monthly, view.topup)


def test_renewal_restores_the_allowance_and_keeps_top_up(database):
    account_id = new_account(database, monthly=5, topup=1)
    with database.session() as session:
        (old_cycle_credit,) = credits.reserve(session, account_id)
        session.execute(
            update(CreditBalance)
            .where(CreditBalance.account_id == account_id)
            .values(renews_at=utcnow() - timedelta(days=1))
        )
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (5, 1)
    assert view.renews_at > utcnow() + timedelta(days=27)
    with database.session() as session:
        credits.refund(session, old_cycle_credit)
    # The last cycle's credit is not added on top of the renewed allowance.
    assert balance(database, account_id).monthly == 5
    assert ledger_totals(database, account_id) == (5, 1)


def test_stale_reservations_are_refunded(database):
    account_id = new_account(database, monthly=2)
    with database.session() as session:
        stale, fresh = credits.reserve(session, account_id, count=2)
        session.execute(
            update(CreditReservation)
            .where(CreditReservation.id == stale)
            .values(created_at=utcnow() - timedelta(hours=1))
        )
    with database.session() as session:
        assert credits.refund_stale(session, timedelta(minutes=15)) == 1
    assert balance(database, account_id).monthly == 1
    with database.session() as session:
        assert credits.consume(session, fresh) is True


def test_concurrent_reservations_never_overdraw(database):
    account_id = new_account(database, monthly=7, topup=8)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def spend():
        for _ in range(5):
            try:
                with database.session() as session:
                    credits.reserve(session, account_id)
                result = True
            except InsufficientCredits:
                result = False
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert outcomes.count(True) == 15 and outcomes.count(False) == 25
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (0, 0)
    assert ledger_totals(database, account_id) == (0, 0)


@pytest.mark.parametrize("month_day, expected", [((1, 31), (2, 28)), ((3, 31), (4, 30)), ((12, 15), (1, 15))])
def test_add_months_clamps_to_the_end_of_the_month(month_day, expected):
    start = utcnow().replace(year=2025, month=month_day[0], day=month_day[1])
    moved = credits.add_months(start, 1)
    assert (moved.month, moved.day) == expected

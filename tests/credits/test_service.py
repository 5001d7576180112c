"""Credits on SQLite and PostgreSQL: each held unit ends once, balances never go negative."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text, update

from shared.accounts import service as accounts
from shared.credits import service as credits
from shared.credits.errors import InsufficientCredits
from shared.credits.cycle import boundary
from shared.credits.models import (
    OUTCOME_CANCELLED,
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    CreditHold,
    LedgerEntry,
    UsageRecord,
)
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


def hold_id(database, account_id, count=1, **options) -> str:
    with database.session() as session:
        return credits.hold(session, account_id, count, **options).id


def test_a_hold_takes_monthly_before_top_up(database):
    account_id = new_account(database, monthly=2, topup=5)
    hold_id(database, account_id, 3)
    view = balance(database, account_id)
    assert (view.monthly, view.topup, view.total) == (0, 4, 4)


def test_a_hold_is_all_or_nothing(database):
    account_id = new_account(database, monthly=1, topup=1)
    with pytest.raises(InsufficientCredits), database.session() as session:
        credits.hold(session, account_id, 3)
    assert balance(database, account_id).total == 2


def test_a_hold_of_one_ends_exactly_once(database):
    account_id = new_account(database, topup=1)
    held = hold_id(database, account_id)
    with database.session() as session:
        assert credits.refund(session, held, OUTCOME_FAILED) is True
    with database.session() as session:
        assert credits.refund(session, held, OUTCOME_FAILED) is False
        assert credits.consume(session, held, OUTCOME_FOUND) is False
    assert balance(database, account_id).topup == 1


def test_a_hold_never_ends_more_units_than_it_took(database):
    account_id = new_account(database, monthly=10)
    held = hold_id(database, account_id, 5)
    with database.session() as session:
        assert credits.consume(session, held, OUTCOME_FOUND, 3) is True
        assert credits.refund(session, held, OUTCOME_CANCELLED, 3) is False
        assert credits.refund(session, held, OUTCOME_CANCELLED, 2) is True
        assert credits.consume(session, held, OUTCOME_FOUND) is False
        ended = session.get(CreditHold, held)
        assert (ended.consumed, ended.refunded, ended.open_units) == (3, 2, 0)
    assert balance(database, account_id).monthly == 7


def test_refunds_give_top_up_credits_back_first(database):
    account_id = new_account(database, monthly=1, topup=1)
    held = hold_id(database, account_id, 2)
    with database.session() as session:
        credits.refund(session, held, OUTCOME_FAILED)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (0, 1)
    with database.session() as session:
        credits.refund(session, held, OUTCOME_FAILED)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (1, 1)


def test_the_ledger_explains_every_balance(database):
    account_id = new_account(database, monthly=3, topup=2)
    held = hold_id(database, account_id, 4)
    with database.session() as session:
        credits.top_up(session, account_id, 10)
    with database.session() as session:
        credits.consume(session, held, OUTCOME_FOUND)
        credits.refund(session, held, OUTCOME_FAILED, 2)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (1, 12)
    assert ledger_totals(database, account_id) == (view.monthly, view.topup)


def test_renewal_restores_the_allowance_and_keeps_top_up(database, monkeypatch):
    account_id = new_account(database, monthly=5, topup=1)
    old_cycle_credit = hold_id(database, account_id)
    a_cycle_later = utcnow() + timedelta(days=32)
    monkeypatch.setattr(credits, "utcnow", lambda: a_cycle_later)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (5, 1)
    assert view.renews_at > a_cycle_later + timedelta(days=27)
    with database.session() as session:
        credits.refund(session, old_cycle_credit, OUTCOME_FAILED)
    # The last cycle's credit is not added on top of the renewed allowance.
    assert balance(database, account_id).monthly == 5
    assert ledger_totals(database, account_id) == (5, 1)


def test_a_hold_once_the_cycle_has_ended_renews_the_balance_first(database, monkeypatch):
    account_id = new_account(database, monthly=2, topup=1)
    hold_id(database, account_id, 2)
    a_cycle_later = utcnow() + timedelta(days=32)
    monkeypatch.setattr(credits, "utcnow", lambda: a_cycle_later)
    held = hold_id(database, account_id, 3)
    view = balance(database, account_id)
    assert (view.monthly, view.topup) == (0, 0)
    assert view.renews_at > a_cycle_later + timedelta(days=27)
    with database.session() as session:
        ended = session.get_one(CreditHold, held)
        assert (ended.monthly, ended.topup, ended.renews_at) == (2, 1, view.renews_at)
    assert ledger_totals(database, account_id) == (0, 0)


def test_an_account_without_a_balance_holds_nothing(database):
    with database.session() as session:
        account_id = accounts.create_account(session, "no-balance@example.com").id
    with pytest.raises(InsufficientCredits, match="no credit balance"), database.session() as session:
        credits.hold(session, account_id)


def test_holds_past_their_expiry_are_refunded(database):
    account_id = new_account(database, monthly=3)
    stale = hold_id(database, account_id, expires_at=utcnow() + timedelta(minutes=15))
    fresh = hold_id(database, account_id, expires_at=utcnow() + timedelta(minutes=15))
    owned = hold_id(database, account_id)
    with database.session() as session:
        session.execute(
            update(CreditHold)
            .where(CreditHold.id == stale)
            .values(expires_at=utcnow() - timedelta(minutes=45))
        )
    with database.session() as session:
        assert credits.expire_stale(session) == 1
    with database.session() as session:
        assert credits.expire_stale(session) == 0
    # Only the stale hold came back: a hold without expiry (a job's) is its owner's to end.
    assert balance(database, account_id).monthly == 1
    with database.session() as session:
        assert credits.consume(session, fresh, OUTCOME_FOUND) is True
        assert credits.refund(session, owned, OUTCOME_CANCELLED) is True
        assert credits.refund(session, stale, OUTCOME_FAILED) is False


def test_concurrent_reservations_never_overdraw(database):
    account_id = new_account(database, monthly=7, topup=8)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def spend():
        for _ in range(5):
            try:
                with database.session() as session:
                    credits.hold(session, account_id)
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
def test_a_cycle_boundary_clamps_to_the_end_of_the_month(month_day, expected):
    start = utcnow().replace(year=2025, month=month_day[0], day=month_day[1])
    moved = boundary(start, 1)
    assert (moved.month, moved.day) == expected


def test_concurrent_ends_of_one_hold_end_each_unit_once(database):
    account_id = new_account(database, monthly=4, topup=6)
    held = hold_id(database, account_id, 10)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def end(refund: bool):
        for _ in range(5):
            with database.session() as session:
                if refund:
                    result = credits.refund(session, held, OUTCOME_FAILED)
                else:
                    result = credits.consume(session, held, OUTCOME_FOUND)
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=end, args=(n % 2 == 0,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(outcomes) == 40 and outcomes.count(True) == 10
    with database.session() as session:
        ended = session.get(CreditHold, held)
        assert ended.consumed + ended.refunded == 10
    view = balance(database, account_id)
    # Whatever the interleaving, the refunds came back and the ledger explains the balance.
    assert view.total == ended.refunded
    assert ledger_totals(database, account_id) == (view.monthly, view.topup)


def usage_outcomes(database, account_id) -> list[str]:
    with database.session() as session:
        return list(
            session.scalars(select(UsageRecord.outcome).where(UsageRecord.account_id == account_id))
        )


def test_a_request_is_settled_once_by_whoever_comes_first(database):
    # The front's refund at its deadline against the worker's consume.
    account_id = new_account(database, monthly=3)
    deadline = utcnow() + timedelta(minutes=1)
    consumed_first = hold_id(database, account_id, expires_at=deadline)
    refunded_first = hold_id(database, account_id, expires_at=deadline)
    with database.session() as session:
        assert credits.consume(session, consumed_first, OUTCOME_FOUND) is True
        assert credits.refund(session, consumed_first, OUTCOME_FAILED) is False
        assert credits.refund(session, refunded_first, OUTCOME_FAILED) is True
        assert credits.consume(session, refunded_first, OUTCOME_FOUND) is False
    assert balance(database, account_id).monthly == 2
    assert sorted(usage_outcomes(database, account_id)) == [OUTCOME_FAILED, OUTCOME_FOUND]


def test_a_hold_past_its_deadline_cannot_be_consumed(database):
    account_id = new_account(database, monthly=1)
    late = hold_id(database, account_id, expires_at=utcnow() - timedelta(milliseconds=1))
    with database.session() as session:
        assert credits.consume(session, late, OUTCOME_FOUND) is False
    assert usage_outcomes(database, account_id) == []
    # Still open: the sweep gives it back.
    with database.session() as session:
        assert credits.expire_stale(session) == 1
    assert balance(database, account_id).monthly == 1


def test_the_deadline_is_judged_when_the_consume_runs_not_when_its_transaction_began(database):
    account_id = new_account(database, monthly=1)
    held = hold_id(database, account_id, expires_at=utcnow() + timedelta(seconds=1))
    with database.session() as session:
        # The transaction starts before the deadline (PostgreSQL's now() is this moment)...
        session.execute(select(func.count()).select_from(CreditHold))
        time.sleep(1.5)
        # ...and its consume runs after it.
        assert credits.consume(session, held, OUTCOME_FOUND) is False
    assert usage_outcomes(database, account_id) == []


def test_a_settlement_alone_survives_its_kept_connection_being_cut(database):
    # The worker's settlement keeps a connection per thread (no pool checkout,
    # no pre-ping): a database restart breaks it, and the next settlement
    # opens another instead of failing.
    if database.engine.dialect.name != "postgresql":
        pytest.skip("SQLite settles in a transaction of the pool's")
    account_id = new_account(database, monthly=3)
    first, second, third = (hold_id(database, account_id) for _ in range(3))
    assert credits.consume_alone(database, first, OUTCOME_FOUND) is True
    assert credits.consume_alone(database, first, OUTCOME_FOUND) is False
    with database.engine.connect() as other:
        cut = other.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND backend_type = 'client backend'"
            )
        ).all()
    assert cut
    assert credits.consume_alone(database, second, OUTCOME_FOUND) is True
    assert credits.consume_alone(database, third, OUTCOME_FOUND) is True
    assert sorted(usage_outcomes(database, account_id)) == [OUTCOME_FOUND] * 3
    assert balance(database, account_id).total == 0

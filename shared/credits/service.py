"""Credits: hold before work, then end each held unit exactly once, consumed or refunded.

A hold takes `count` credits from a balance, monthly ones first, for `count`
pieces of work: a synchronous request holds 1, a bulk job one per item. Each
unit then ends once through a compare-and-set on the hold's counters, so that
`consumed + refunded` never exceeds the hold.

Every change happens after a write lock on the account's balance row, in one
transaction with the ledger entry of any money movement and the usage record
of the outcome, so that concurrent work on any number of processes is counted
one by one and a balance never goes below zero. Lock order: a job row (if
any), then the balance, then a hold.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import (
    ColumnElement,
    Integer,
    Table,
    Update,
    bindparam,
    case,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from shared.credits import cycle, usage
from shared.credits.errors import HoldNotFound, InsufficientCredits
from shared.credits.models import (
    ENTRY_GRANT,
    ENTRY_HOLD,
    ENTRY_REFUND,
    ENTRY_RENEWAL,
    ENTRY_TOPUP,
    OUTCOME_FAILED,
    PAID_OUTCOMES,
    REFUND_OUTCOMES,
    CreditBalance,
    CreditHold,
    LedgerEntry,
)
from shared.db.base import Base, UTCDateTime, utcnow
from shared.db.session import Database


def _table(model: type[Base]) -> Table:
    # A declarative model's table (typed as a FromClause by the ORM).
    return cast(Table, model.__table__)


# The hold's statements, built once: building a statement and its cache key
# cost more CPU than running it (see `hold`).
_BALANCES = _table(CreditBalance)
_BALANCE_OF_ACCOUNT = _BALANCES.c.account_id == bindparam("of_account")


def _lock_and_read(where: ColumnElement[bool]):
    # The no-op write takes the lock (see _locked_balance) and reads the row
    # in the same round trip.
    return (
        update(_BALANCES)
        .where(where)
        .values(account_id=_BALANCES.c.account_id)
        .returning(
            _BALANCES.c.account_id, _BALANCES.c.monthly, _BALANCES.c.topup, _BALANCES.c.renews_at
        )
    )


_HOLDS = _table(CreditHold)
# A hold's settlement knows the hold, not the account.
_BALANCE_OF_HOLD = (
    _BALANCES.c.account_id
    == select(_HOLDS.c.account_id).where(_HOLDS.c.id == bindparam("of_hold")).scalar_subquery()
)
_LOCK_BALANCE_OF_ACCOUNT = _lock_and_read(_BALANCE_OF_ACCOUNT)
_LOCK_BALANCE_OF_HOLD = _lock_and_read(_BALANCE_OF_HOLD)
_TAKE_FROM_BALANCE = update(_BALANCES).where(_BALANCE_OF_ACCOUNT)
_NEW_HOLD = insert(_HOLDS)
_NEW_LEDGER_ENTRY = insert(_table(LedgerEntry))

# PostgreSQL's hold in one statement: the balance row locked and read once
# (`locked`, the latest committed version once the lock is granted), then,
# only if it holds enough and is not due for renewal, the take, the hold and
# its ledger entry (data-modifying CTEs, one snapshot, all or nothing with
# the statement). `held_monthly` is None when nothing was taken.
_HOLD_IN_ONE_STATEMENT = (
    text(
        f"""
WITH locked AS MATERIALIZED (
    SELECT account_id, monthly, topup, renews_at FROM {_BALANCES.name}
    WHERE account_id = :of_account FOR UPDATE
), taken AS (
    UPDATE {_BALANCES.name} AS balance
    SET monthly = locked.monthly - LEAST(locked.monthly, CAST(:count AS integer)),
        topup = locked.topup - (CAST(:count AS integer) - LEAST(locked.monthly, CAST(:count AS integer)))
    FROM locked
    WHERE balance.account_id = locked.account_id
      AND locked.monthly + locked.topup >= CAST(:count AS integer)
      AND locked.renews_at > CAST(:now AS timestamptz)
    RETURNING LEAST(locked.monthly, CAST(:count AS integer)) AS monthly,
              CAST(:count AS integer) - LEAST(locked.monthly, CAST(:count AS integer)) AS topup,
              locked.renews_at
), hold AS (
    INSERT INTO {_HOLDS.name}
        (id, account_id, monthly, topup, renews_at, consumed, refunded, expires_at, created_at)
    SELECT CAST(:hold_id AS varchar), CAST(:of_account AS integer), monthly, topup, renews_at,
           0, 0, CAST(:expires_at AS timestamptz), CAST(:now AS timestamptz)
    FROM taken
), ledger AS (
    INSERT INTO {_table(LedgerEntry).name}
        (account_id, kind, monthly_delta, topup_delta, hold_id, note, created_at)
    SELECT CAST(:of_account AS integer), '{ENTRY_HOLD}', -monthly, -topup,
           CAST(:hold_id AS varchar), CAST(:note AS varchar), CAST(:now AS timestamptz)
    FROM taken
)
SELECT locked.renews_at, (SELECT taken.monthly FROM taken) AS held_monthly FROM locked
"""
    )
    .bindparams(bindparam("now", type_=UTCDateTime()), bindparam("expires_at", type_=UTCDateTime()))
    .columns(renews_at=UTCDateTime(), held_monthly=Integer())
)


def _end_units(counter: str, *conditions: ColumnElement[bool]) -> Update:
    """The compare-and-set that ends each unit once: add `:count` to the hold's
    `counter` if that many units are open (and `conditions` hold). A hold with
    nothing left open leaves the index the stale sweep reads."""
    count = bindparam("count", type_=Integer)
    ended_units = _HOLDS.c.consumed + _HOLDS.c.refunded + count
    size = _HOLDS.c.monthly + _HOLDS.c.topup
    return (
        update(_HOLDS)
        .where(_HOLDS.c.id == bindparam("of_hold"), ended_units <= size, *conditions)
        .values(
            {
                _HOLDS.c[counter]: _HOLDS.c[counter] + count,
                _HOLDS.c.expires_at: case((ended_units == size, None), else_=_HOLDS.c.expires_at),
            }
        )
    )


def _before_expiry(database_clock: ColumnElement) -> ColumnElement[bool]:
    # The database's time when the statement runs: PostgreSQL's `now()` is its
    # transaction's start, `clock_timestamp()` the moment itself; SQLite keeps
    # datetimes as text in this shape (UTC).
    return or_(_HOLDS.c.expires_at.is_(None), _HOLDS.c.expires_at > database_clock)


_REFUND_UNITS = _end_units("refunded")
_CONSUME_UNITS = {
    "postgresql": _end_units("consumed", _before_expiry(func.clock_timestamp())),
    "sqlite": _end_units("consumed", _before_expiry(func.strftime("%Y-%m-%d %H:%M:%f", "now"))),
}
# PostgreSQL: the balance's lock (the no-op write, as `_LOCK_BALANCE_OF_HOLD`,
# unless the balance is due for renewal) and the database's clock once it is
# held; the compare-and-set of the hold, joined to that row, with the
# deadline judged by that clock (as `_end` judges after its lock: the hold's
# row changes only under its balance's lock, so nothing waits after it); the
# usage record of the row it changed.
_LOCKED = (
    update(_BALANCES)
    .where(_BALANCE_OF_HOLD, _BALANCES.c.renews_at > bindparam("now", type_=UTCDateTime))
    .values(account_id=_BALANCES.c.account_id)
    .returning(_BALANCES.c.account_id, func.clock_timestamp().label("locked_at"))
    .cte("locked")
)
_CONSUME_LOCKED_AND_RECORD = usage.recording(
    _end_units(
        "consumed",
        _HOLDS.c.account_id == _LOCKED.c.account_id,
        _before_expiry(_LOCKED.c.locked_at),
    )
    .returning(_HOLDS.c.account_id)
    .cte("consumed")
).add_cte(_LOCKED)


@dataclass(frozen=True, slots=True)
class BalanceView:
    monthly: int
    monthly_allowance: int
    topup: int
    renews_at: datetime

    @property
    def total(self) -> int:
        return self.monthly + self.topup

    def to_dict(self) -> dict:
        return {
            "monthly": self.monthly,
            "monthlyAllowance": self.monthly_allowance,
            "topup": self.topup,
            "total": self.total,
            "renewsAt": self.renews_at.date().isoformat(),
        }


def open_balance(
    session: Session, account_id: int, *, monthly_allowance: int, topup: int = 0
) -> None:
    """Give a new account its first cycle of monthly credits and any top-up."""
    now = utcnow()
    session.add(
        CreditBalance(
            account_id=account_id,
            monthly=monthly_allowance,
            monthly_allowance=monthly_allowance,
            topup=topup,
            opened_at=now,
            renews_at=cycle.boundary(now, 1),
        )
    )
    session.add(
        LedgerEntry(
            account_id=account_id,
            kind=ENTRY_GRANT,
            monthly_delta=monthly_allowance,
            topup_delta=topup,
            note="account opened",
        )
    )
    session.flush()


def _locked_balance(session: Session, account_id: int) -> CreditBalance:
    # A no-op write first: the row lock on PostgreSQL, the database write lock
    # on SQLite; the read that follows then sees the latest committed state.
    session.execute(
        update(CreditBalance)
        .where(CreditBalance.account_id == account_id)
        .values(account_id=CreditBalance.account_id)
    )
    balance = session.scalar(
        select(CreditBalance)
        .where(CreditBalance.account_id == account_id)
        .execution_options(populate_existing=True)
    )
    if balance is None:
        raise InsufficientCredits("The account has no credit balance.")
    _renew_if_due(session, balance)
    return balance


def _renew_if_due(session: Session, balance: CreditBalance) -> None:
    now = utcnow()
    if balance.renews_at > now:
        return
    renews_at = cycle.next_renewal(balance.opened_at, now)
    session.add(
        LedgerEntry(
            account_id=balance.account_id,
            kind=ENTRY_RENEWAL,
            monthly_delta=balance.monthly_allowance - balance.monthly,
            note=f"cycle renewed until {renews_at.date().isoformat()}",
        )
    )
    balance.monthly = balance.monthly_allowance
    balance.renews_at = renews_at


@dataclass(frozen=True, slots=True)
class Held:
    """A hold as made: its id, and how many of its credits were monthly and top-up ones."""

    id: str
    monthly: int
    topup: int


def hold(
    session: Session,
    account_id: int,
    count: int = 1,
    *,
    expires_at: datetime | None = None,
    note: str | None = None,
) -> Held:
    """Take `count` credits, monthly ones first, all or none (InsufficientCredits).

    With `expires_at`, the units still open then cannot be consumed any more
    and are refunded by `expire_stale` (a request's deadline, work whose
    process died); without it the caller ends every unit itself.

    Every synchronous request makes one, so it is prebuilt Core, not an ORM
    flush: on PostgreSQL one statement (one round trip), elsewhere (SQLite)
    four (lock and read, take, the hold, its ledger entry).
    """
    if count < 1:
        raise ValueError("A hold is one credit or more.")
    if _dialect(session) == "postgresql":
        return _hold_in_one_statement(session, account_id, count, expires_at, note)
    return _hold_in_four_statements(session, account_id, count, expires_at, note)


def _hold_in_four_statements(
    session: Session, account_id: int, count: int, expires_at: datetime | None, note: str | None
) -> Held:
    locked = _lock_balance_figures(session, _LOCK_BALANCE_OF_ACCOUNT, {"of_account": account_id})
    if locked is None:
        raise InsufficientCredits("The account has no credit balance.")
    _, monthly, topup, renews_at = locked
    if monthly + topup < count:
        raise InsufficientCredits("Insufficient credits.")
    held = Held(str(uuid.uuid4()), monthly=min(monthly, count), topup=count - min(monthly, count))
    connection = session.connection()
    connection.execute(
        _TAKE_FROM_BALANCE,
        {"of_account": account_id, "monthly": monthly - held.monthly, "topup": topup - held.topup},
    )
    connection.execute(
        _NEW_HOLD,
        {
            "id": held.id,
            "account_id": account_id,
            "monthly": held.monthly,
            "topup": held.topup,
            "renews_at": renews_at,
            "consumed": 0,
            "refunded": 0,
            "expires_at": expires_at,
        },
    )
    connection.execute(
        _NEW_LEDGER_ENTRY,
        {
            "account_id": account_id,
            "kind": ENTRY_HOLD,
            "monthly_delta": -held.monthly,
            "topup_delta": -held.topup,
            "hold_id": held.id,
            "note": note,
        },
    )
    return held


def _hold_in_one_statement(
    session: Session, account_id: int, count: int, expires_at: datetime | None, note: str | None
) -> Held:
    """PostgreSQL: the lock, the take, the hold and its ledger entry in one
    round trip (`_HOLD_IN_ONE_STATEMENT`); a renewal that is due goes the
    four statements' way, under the lock taken here."""
    held_id = str(uuid.uuid4())
    now = utcnow()
    row = (
        session.connection()
        .execute(
            _HOLD_IN_ONE_STATEMENT,
            {
                "of_account": account_id,
                "count": count,
                "now": now,
                "hold_id": held_id,
                "expires_at": expires_at,
                "note": note,
            },
        )
        .first()
    )
    if row is None:
        raise InsufficientCredits("The account has no credit balance.")
    if row.held_monthly is not None:
        return Held(held_id, monthly=row.held_monthly, topup=count - row.held_monthly)
    if row.renews_at <= now:
        return _hold_in_four_statements(session, account_id, count, expires_at, note)
    raise InsufficientCredits("Insufficient credits.")


def _lock_balance_figures(
    session: Session, statement, params: dict
) -> tuple[int, int, int, datetime] | None:
    """(account, monthly, top-up, renews_at) of the balance `statement` locks,
    renewed if due; None when it locks no row."""
    row = session.connection().execute(statement, params).first()
    if row is None:
        return None
    if row.renews_at > utcnow():
        return row.account_id, row.monthly, row.topup, row.renews_at
    # Once a cycle: the renewal's own path, and its writes flushed before ours.
    balance = _locked_balance(session, row.account_id)
    session.flush()
    return balance.account_id, balance.monthly, balance.topup, balance.renews_at


def consume(session: Session, hold_id: str, outcome: str, count: int = 1) -> bool:
    """Mark `count` units as done and paid; `outcome` is OUTCOME_FOUND or OUTCOME_NOT_FOUND.

    False, and nothing changes, if fewer than `count` units of the hold are
    still open, or if the hold has expired by the database's clock when the
    compare-and-set runs (a front that gave up on its request at that
    deadline answered no 200). The balance does not move: the hold took the
    credits already.
    """
    _check_paid(outcome, count)
    # The session's pending changes first: Core statements do not flush them.
    session.flush()
    if _consumed_in_one_statement(session.connection(), hold_id, outcome, count):
        return True
    return _end(session, hold_id, outcome, count, _CONSUME_UNITS[_dialect(session)]) is not None


def consume_alone(database: Database, hold_id: str, outcome: str) -> bool:
    """`consume` of a one-unit hold (an interactive request's) in a transaction
    of its own: on PostgreSQL one statement in autocommit, one round trip,
    unless the balance is due for renewal (then, and when it fails,
    `consume`'s path).

    One unit only: `Database.autocommit` runs the statement again after a
    broken connection, and only a hold with nothing left open after the
    first run refuses a second one.
    """
    _check_paid(outcome, 1)
    if database.engine.dialect.name == "postgresql":
        if database.autocommit(lambda connection: _consumed_in_one_statement(connection, hold_id, outcome, 1)):
            return True
    with database.session() as session:
        return _end(session, hold_id, outcome, 1, _CONSUME_UNITS[_dialect(session)]) is not None


def _check_paid(outcome: str, count: int) -> None:
    if outcome not in PAID_OUTCOMES:
        raise ValueError(f"not an outcome that is paid for: {outcome}")
    if count < 1:
        raise ValueError("A hold ends one unit or more at a time.")


def _consumed_in_one_statement(connection: Connection, hold_id: str, outcome: str, count: int) -> bool:
    """PostgreSQL: the balance's lock, the compare-and-set and the usage record
    in one statement (atomic on its own, so it may run in autocommit; the
    deadline judged once the lock is held, right before the commit). False when
    it changed nothing: the units are not open, the hold has expired or is
    unknown, or the balance is due for renewal; `_end` then decides. Always
    False on other databases."""
    if connection.dialect.name != "postgresql":
        return False
    params = {"of_hold": hold_id, "count": count, "now": utcnow(), **usage.record_parameters(outcome, count)}
    return connection.execute(_CONSUME_LOCKED_AND_RECORD, params).first() is not None


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def refund(session: Session, hold_id: str, outcome: str, count: int = 1) -> bool:
    """Give `count` units back; `outcome` says why (failed, cancelled, rate limited).

    False, and nothing changes, if fewer than `count` units of the hold are still open.
    """
    if outcome not in REFUND_OUTCOMES:
        raise ValueError(f"not an outcome that is refunded: {outcome}")
    account_id = _end(session, hold_id, outcome, count, _REFUND_UNITS)
    if account_id is None:
        return False
    # The ORM objects, read after the Core statements of `_end` (the balance is locked already).
    held = session.get_one(CreditHold, hold_id, populate_existing=True)
    balance = session.get_one(CreditBalance, account_id, populate_existing=True)
    monthly, topup = _refund_sources(held, balance, count)
    balance.monthly += monthly
    balance.topup += topup
    session.add(
        LedgerEntry(
            account_id=balance.account_id,
            kind=ENTRY_REFUND,
            monthly_delta=monthly,
            topup_delta=topup,
            hold_id=hold_id,
            note=f"{count} {outcome.replace('_', ' ')}",
        )
    )
    return True


def _end(session: Session, hold_id: str, outcome: str, count: int, units: Update) -> int | None:
    """End `count` units of the hold by the compare-and-set `units` (one of
    `_end_units`) and record the outcome; the hold's account, or None.

    Core statements on the session's connection: three round trips (lock,
    usage record, compare-and-set), without the ORM's unit of work.
    """
    if count < 1:
        raise ValueError("A hold ends one unit or more at a time.")
    # The session's pending changes first: Core statements do not flush them.
    session.flush()
    account_id = _lock_balance_of_hold(session, hold_id)
    # Written before the compare-and-set and withdrawn if it fails, so that
    # the compare-and-set is the last statement before COMMIT: a consume
    # judged on time commits right after its judgement.
    record_id = usage.record(session, account_id, outcome, count)
    changed = session.connection().execute(units, {"of_hold": hold_id, "count": count}).rowcount
    if not changed:
        usage.withdraw(session, record_id)
        return None
    return account_id


def _lock_balance_of_hold(session: Session, hold_id: str) -> int:
    """Lock the balance of the hold's account in one statement (renewing it
    if due); answers the account."""
    locked = _lock_balance_figures(session, _LOCK_BALANCE_OF_HOLD, {"of_hold": hold_id})
    if locked is None:
        if session.scalar(select(CreditHold.account_id).where(CreditHold.id == hold_id)) is None:
            raise HoldNotFound(hold_id)
        raise InsufficientCredits("The account has no credit balance.")
    return locked[0]


def _refund_sources(held: CreditHold, balance: CreditBalance, count: int) -> tuple[int, int]:
    """How many of the `count` units just refunded go back as (monthly, top-up) credits.

    Monthly credits are spent first, so top-up ones come back first. Monthly
    ones come back only into the cycle they were taken from: a renewal since
    has restored the full allowance already.
    """
    refunded_before = held.refunded - count
    topup = min(held.topup, held.refunded) - min(held.topup, refunded_before)
    monthly = count - topup if held.renews_at == balance.renews_at else 0
    return monthly, topup


def expire_stale(session: Session) -> int:
    """Refund the open units of holds past their expiry (work that never reported back).

    Answers how many holds it refunded.
    """
    stale = session.scalars(
        select(CreditHold.id).where(CreditHold.expires_at < utcnow())
    ).all()
    return sum(_expire(session, hold_id) for hold_id in stale)


def _expire(session: Session, hold_id: str) -> bool:
    held = session.get_one(CreditHold, hold_id)
    _locked_balance(session, held.account_id)
    session.refresh(held)
    return held.open_units > 0 and refund(session, hold_id, OUTCOME_FAILED, held.open_units)


def top_up(session: Session, account_id: int, amount: int, note: str | None = None) -> None:
    if amount <= 0:
        raise ValueError("A top-up is a positive number of credits.")
    balance = _locked_balance(session, account_id)
    balance.topup += amount
    session.add(
        LedgerEntry(account_id=account_id, kind=ENTRY_TOPUP, topup_delta=amount, note=note)
    )


def show(session: Session, account_id: int) -> BalanceView:
    balance = _locked_balance(session, account_id)
    return BalanceView(
        monthly=balance.monthly,
        monthly_allowance=balance.monthly_allowance,
        topup=balance.topup,
        renews_at=balance.renews_at,
    )

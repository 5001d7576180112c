"""Usage: how classifications ended, per account and day; and the ledger's credit entries.

Each unit of a hold that ends (consumed or refunded, in `service`) records its
outcome here in the same transaction, so these counts are exact too. A bulk
job's chunk records one row per outcome, not one per item. Reports aggregate
in SQL and never change anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import cast

from sqlalchemy import CTE, Date, Insert, Integer, String, Table, bindparam, delete, func, insert, select
from sqlalchemy.orm import Session

from shared.credits import cycle
from shared.credits.models import (
    ENTRY_GRANT,
    ENTRY_RENEWAL,
    ENTRY_TOPUP,
    PAID_OUTCOMES,
    CreditBalance,
    LedgerEntry,
    UsageRecord,
)
from shared.db.base import UTCDateTime, utcnow

CHART_DAYS = 30
# The entries that add credits, shown on the billing page.
CREDIT_KINDS = (ENTRY_GRANT, ENTRY_RENEWAL, ENTRY_TOPUP)


@dataclass(frozen=True, slots=True)
class DayUsage:
    day: date
    found: int = 0
    not_found: int = 0
    failed: int = 0
    cancelled: int = 0
    rate_limited: int = 0

    @property
    def total(self) -> int:
        return self.found + self.not_found + self.failed + self.cancelled + self.rate_limited


_RECORDS = cast(Table, UsageRecord.__table__)  # a FromClause to the type checker


_RECORDED = ("account_id", "day", "outcome", "count", "created_at")
_RECORD = insert(_RECORDS).returning(_RECORDS.c.id)
_WITHDRAW = delete(_RECORDS).where(_RECORDS.c.id == bindparam("record"))


def record(session: Session, account_id: int, outcome: str, count: int) -> int:
    """`count` classifications of the account ended with `outcome` just now; the record's id.

    A Core INSERT on the session's connection: it is written at once, not at the next flush.
    """
    now = utcnow()
    return session.connection().execute(
        _RECORD,
        {"account_id": account_id, "day": now.date(), "outcome": outcome, "count": count, "created_at": now},
    ).scalar_one()


def withdraw(session: Session, record_id: int) -> None:
    """Take back a record of this transaction (its outcome did not happen after all)."""
    session.connection().execute(_WITHDRAW, {"record": record_id})


def recording(accounts: CTE) -> Insert:
    """A statement that records, for each row of `accounts` (its `account_id`),
    what `record_parameters` gives; answers the records' ids. Built once by
    its caller: a settlement writes its usage in the statement that decides it."""
    return (
        insert(_RECORDS)
        .from_select(
            _RECORDED,
            select(
                accounts.c.account_id,
                bindparam("recorded_day", type_=Date),
                bindparam("recorded_outcome", type_=String),
                bindparam("recorded_count", type_=Integer),
                bindparam("recorded_at", type_=UTCDateTime),
            ),
        )
        .add_cte(accounts)
        .returning(_RECORDS.c.id)
    )


def record_parameters(outcome: str, count: int) -> dict:
    """The parameters of a `recording` statement, as of now (named apart from
    any column: an UPDATE in the same statement would set a column its
    parameters name)."""
    now = utcnow()
    return {"recorded_day": now.date(), "recorded_outcome": outcome, "recorded_count": count, "recorded_at": now}


def daily_usage(session: Session, account_id: int, days: int = CHART_DAYS) -> list[DayUsage]:
    """One DayUsage per UTC day, oldest first, ending today; days without use count zero."""
    first_day = utcnow().date() - timedelta(days=days - 1)
    rows = session.execute(
        select(UsageRecord.day, UsageRecord.outcome, func.sum(UsageRecord.count))
        .where(UsageRecord.account_id == account_id, UsageRecord.day >= first_day)
        .group_by(UsageRecord.day, UsageRecord.outcome)
    )
    counts: dict[date, dict[str, int]] = {}
    for day, outcome, count in rows:
        counts.setdefault(day, {})[outcome] = count
    return [
        DayUsage(day, **counts.get(day, {}))
        for day in (first_day + timedelta(days=n) for n in range(days))
    ]


def cycle_usage(session: Session, account_id: int, renews_at: datetime) -> int:
    """Classifications paid for in the billing cycle that ends at `renews_at`."""
    opened_at = session.execute(
        select(CreditBalance.opened_at).where(CreditBalance.account_id == account_id)
    ).scalar_one()
    paid = session.execute(
        select(func.sum(UsageRecord.count)).where(
            UsageRecord.account_id == account_id,
            UsageRecord.outcome.in_(PAID_OUTCOMES),
            UsageRecord.created_at >= cycle.cycle_start(opened_at, renews_at),
            UsageRecord.created_at < renews_at,
        )
    ).scalar_one()
    return paid or 0


def credit_entries(session: Session, account_id: int) -> list[LedgerEntry]:
    """Grants, renewals and top-ups, newest first."""
    return list(
        session.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.kind.in_(CREDIT_KINDS))
            .order_by(LedgerEntry.created_at.desc(), LedgerEntry.id.desc())
        )
    )

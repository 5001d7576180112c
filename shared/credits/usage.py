"""Usage reports read from the ledger: daily counts, this cycle's use, grants and top-ups.

Every settled classification left a ledger entry: `consume` noted "found"
or "not found", or `refund` (the work failed or was undone; a bulk job
refunds many credits in one entry). Reports read those entries; they never
change anything.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from shared.credits.models import (
    ENTRY_CONSUME,
    ENTRY_GRANT,
    ENTRY_REFUND,
    ENTRY_RENEWAL,
    ENTRY_TOPUP,
    NOTE_FOUND,
    LedgerEntry,
)
from shared.credits.service import add_months
from shared.db.base import utcnow

CHART_DAYS = 30
# The entries that add credits, shown on the billing page.
CREDIT_KINDS = (ENTRY_GRANT, ENTRY_RENEWAL, ENTRY_TOPUP)


@dataclass(frozen=True, slots=True)
class DayUsage:
    day: date
    found: int = 0
    not_found: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.found + self.not_found + self.failed


def daily_usage(session: Session, account_id: int, days: int = CHART_DAYS) -> list[DayUsage]:
    """One DayUsage per UTC day, oldest first, ending today; days without use count zero."""
    first_day = utcnow().date() - timedelta(days=days - 1)
    rows = session.execute(
        select(LedgerEntry).where(
            LedgerEntry.account_id == account_id,
            LedgerEntry.kind.in_((ENTRY_CONSUME, ENTRY_REFUND)),
            LedgerEntry.created_at >= datetime.combine(first_day, time(), tzinfo=timezone.utc),
        )
    ).scalars()
    counts: Counter = Counter()
    for entry in rows:
        counts[entry.created_at.date(), _outcome(entry)] += _classifications(entry)
    return [
        DayUsage(
            day,
            found=counts[day, "found"],
            not_found=counts[day, "not_found"],
            failed=counts[day, "failed"],
        )
        for day in (first_day + timedelta(days=n) for n in range(days))
    ]


def _outcome(entry: LedgerEntry) -> str:
    if entry.kind == ENTRY_REFUND:
        return "failed"
    return "found" if entry.note == NOTE_FOUND else "not_found"


def _classifications(entry: LedgerEntry) -> int:
    """A consume is one classification; a bulk job refunds many in one entry.

    A refund into a cycle that has since renewed gives nothing back (its
    deltas are zero) but still stands for at least one failed classification.
    """
    if entry.kind == ENTRY_CONSUME:
        return 1
    return max(1, entry.monthly_delta + entry.topup_delta)


def cycle_usage(session: Session, account_id: int, renews_at: datetime) -> int:
    """Classifications paid for in the billing cycle that ends at `renews_at`."""
    cycle_start = add_months(renews_at, -1)
    return session.scalar(
        select(func.count(LedgerEntry.id)).where(
            LedgerEntry.account_id == account_id,
            LedgerEntry.kind == ENTRY_CONSUME,
            LedgerEntry.created_at >= cycle_start,
        )
    ) or 0


def credit_entries(session: Session, account_id: int) -> list[LedgerEntry]:
    """Grants, renewals and top-ups, newest first."""
    return list(
        session.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.kind.in_(CREDIT_KINDS))
            .order_by(LedgerEntry.created_at.desc(), LedgerEntry.id.desc())
        )
    )

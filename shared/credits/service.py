"""Credits: reserve before work, then consume or refund, exactly once.

Every change of a balance happens in one transaction with the ledger entry
that explains it, after a write lock on the account's balance row, so that
concurrent requests on any number of processes are counted one by one and a
balance never goes below zero.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from shared.credits.errors import InsufficientCredits, ReservationNotFound
from shared.credits.models import (
    ENTRY_CONSUME,
    ENTRY_GRANT,
    ENTRY_REFUND,
    ENTRY_RENEWAL,
    ENTRY_RESERVE,
    ENTRY_TOPUP,
    SOURCE_MONTHLY,
    SOURCE_TOPUP,
    STATUS_CONSUMED,
    STATUS_REFUNDED,
    STATUS_RESERVED,
    CreditBalance,
    CreditReservation,
    LedgerEntry,
)
from shared.db.base import utcnow


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


def add_months(moment: datetime, months: int) -> datetime:
    """The same day and time `months` later, clamped to the month's last day."""
    month_index = moment.month - 1 + months
    year, month = moment.year + month_index // 12, month_index % 12 + 1
    for day in range(moment.day, 27, -1):
        try:
            return moment.replace(year=year, month=month, day=day)
        except ValueError:
            continue
    return moment.replace(year=year, month=month, day=min(moment.day, 28))


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
            renews_at=add_months(now, 1),
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
    renews_at = balance.renews_at
    while renews_at <= now:
        renews_at = add_months(renews_at, 1)
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


def _take(balance: CreditBalance, count: int) -> tuple[int, int]:
    """Take `count` credits, monthly ones first; all of them or none.

    Answers how many came from the monthly and from the top-up credits.
    """
    if balance.total < count:
        raise InsufficientCredits("Insufficient credits.")
    from_monthly = min(balance.monthly, count)
    balance.monthly -= from_monthly
    balance.topup -= count - from_monthly
    return from_monthly, count - from_monthly


def _give_back(
    session: Session,
    balance: CreditBalance,
    monthly: int,
    topup: int,
    *,
    reservation_id: str | None = None,
    note: str | None = None,
) -> None:
    balance.monthly += monthly
    balance.topup += topup
    session.add(
        LedgerEntry(
            account_id=balance.account_id,
            kind=ENTRY_REFUND,
            monthly_delta=monthly,
            topup_delta=topup,
            reservation_id=reservation_id,
            note=note,
        )
    )


def reserve(session: Session, account_id: int, count: int = 1) -> list[str]:
    """Hold `count` credits, monthly ones first; all of them or none."""
    balance = _locked_balance(session, account_id)
    from_monthly, from_topup = _take(balance, count)
    sources = [SOURCE_MONTHLY] * from_monthly + [SOURCE_TOPUP] * from_topup
    ids = []
    for source in sources:
        reservation = CreditReservation(
            id=str(uuid.uuid4()),
            account_id=account_id,
            source=source,
            status=STATUS_RESERVED,
            renews_at=balance.renews_at,
        )
        session.add(reservation)
        session.add(
            LedgerEntry(
                account_id=account_id,
                kind=ENTRY_RESERVE,
                monthly_delta=-1 if source == SOURCE_MONTHLY else 0,
                topup_delta=-1 if source == SOURCE_TOPUP else 0,
                reservation_id=reservation.id,
            )
        )
        ids.append(reservation.id)
    session.flush()
    return ids


def consume(session: Session, reservation_id: str, note: str | None = None) -> bool:
    """Mark the work as done and paid. False if the reservation had ended already.

    `note` says what the work gave (NOTE_FOUND or NOTE_NOT_FOUND), for usage reports.
    """
    return _settle(session, reservation_id, STATUS_CONSUMED, note)


def refund(session: Session, reservation_id: str) -> bool:
    """Give the credit back. False if the reservation had ended already."""
    return _settle(session, reservation_id, STATUS_REFUNDED)


def _settle(session: Session, reservation_id: str, status: str, note: str | None = None) -> bool:
    account_id = session.scalar(
        select(CreditReservation.account_id).where(CreditReservation.id == reservation_id)
    )
    if account_id is None:
        raise ReservationNotFound(reservation_id)
    balance = _locked_balance(session, account_id)
    # The status check is the compare-and-set that makes settlement happen once.
    ended = session.execute(
        update(CreditReservation)
        .where(CreditReservation.id == reservation_id, CreditReservation.status == STATUS_RESERVED)
        .values(status=status, settled_at=utcnow())
    ).rowcount  # type: ignore[attr-defined]  # an UPDATE's CursorResult
    if not ended:
        return False
    reservation = session.get_one(CreditReservation, reservation_id, populate_existing=True)
    if status == STATUS_CONSUMED:
        session.add(
            LedgerEntry(
                account_id=account_id, kind=ENTRY_CONSUME, reservation_id=reservation_id, note=note
            )
        )
        return True
    monthly_delta, topup_delta = 0, 0
    if reservation.source == SOURCE_TOPUP:
        topup_delta = 1
    elif reservation.renews_at == balance.renews_at:
        monthly_delta = 1
    # A monthly credit taken in a cycle that has since renewed is not given
    # back: the renewal already restored the full allowance.
    _give_back(session, balance, monthly_delta, topup_delta, reservation_id=reservation_id)
    return True


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


def refund_stale(session: Session, older_than: timedelta) -> int:
    """Refund reservations whose work never reported back (a crashed process)."""
    cutoff = utcnow() - older_than
    stale = session.scalars(
        select(CreditReservation.id).where(
            CreditReservation.status == STATUS_RESERVED, CreditReservation.created_at < cutoff
        )
    ).all()
    return sum(refund(session, reservation_id) for reservation_id in stale)


@dataclass(frozen=True, slots=True)
class BulkHold:
    """Credits held at once for many pieces of work (a bulk job), by source.

    Unlike `reserve`, no row per credit: the caller keeps the hold and ends
    each credit exactly once itself, through an idempotent status change of
    the piece of work, in the same transaction as `consume_held` or
    `refund_held`.
    """

    monthly: int
    topup: int
    renews_at: datetime


def hold(session: Session, account_id: int, count: int, note: str) -> BulkHold:
    """Hold `count` credits, monthly ones first, in one ledger entry; all or none."""
    balance = _locked_balance(session, account_id)
    from_monthly, from_topup = _take(balance, count)
    session.add(
        LedgerEntry(
            account_id=account_id,
            kind=ENTRY_RESERVE,
            monthly_delta=-from_monthly,
            topup_delta=-from_topup,
            note=note,
        )
    )
    return BulkHold(monthly=from_monthly, topup=from_topup, renews_at=balance.renews_at)


def consume_held(session: Session, account_id: int, notes: list[str]) -> None:
    """Record held credits as spent, one consume entry each (NOTE_FOUND / NOTE_NOT_FOUND).

    The balance does not move: `hold` took the credits already.
    """
    session.add_all(
        LedgerEntry(account_id=account_id, kind=ENTRY_CONSUME, note=note) for note in notes
    )


def refund_held(
    session: Session, account_id: int, held: BulkHold, refunded_before: int, count: int, note: str
) -> None:
    """Give back `count` credits of a hold of which `refunded_before` came back already.

    Monthly credits are spent before top-up ones, so the credits that come
    back are the top-up ones first; monthly ones only into the cycle they were
    taken from (as `refund` does).
    """
    if count <= 0:
        return
    balance = _locked_balance(session, account_id)
    topup_delta = min(held.topup, refunded_before + count) - min(held.topup, refunded_before)
    monthly_delta = count - topup_delta if held.renews_at == balance.renews_at else 0
    _give_back(session, balance, monthly_delta, topup_delta, note=note)

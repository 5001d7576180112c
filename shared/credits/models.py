"""Credit balances, reservations and the append-only ledger that explains them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from shared.db.base import Base, UTCDateTime, utcnow

SOURCE_MONTHLY = "monthly"
SOURCE_TOPUP = "topup"

STATUS_RESERVED = "reserved"
STATUS_CONSUMED = "consumed"
STATUS_REFUNDED = "refunded"

ENTRY_GRANT = "grant"
ENTRY_RENEWAL = "renewal"
ENTRY_TOPUP = "topup"
ENTRY_RESERVE = "reserve"
ENTRY_CONSUME = "consume"
ENTRY_REFUND = "refund"

# What a consumed credit bought, in the note of its ledger entry.
NOTE_FOUND = "found"
NOTE_NOT_FOUND = "not found"


class CreditBalance(Base):
    __tablename__ = "credit_balances"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    monthly: Mapped[int] = mapped_column(Integer)
    monthly_allowance: Mapped[int] = mapped_column(Integer)
    topup: Mapped[int] = mapped_column(Integer)
    renews_at: Mapped[datetime] = mapped_column(UTCDateTime)

    @property
    def total(self) -> int:
        return self.monthly + self.topup


class CreditReservation(Base):
    """One credit held for one piece of work; it ends exactly once."""

    __tablename__ = "credit_reservations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    source: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), index=True)
    # The billing cycle the credit came from: a monthly credit is refunded
    # only into the cycle it was taken from.
    renews_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class LedgerEntry(Base):
    __tablename__ = "credit_ledger"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    monthly_delta: Mapped[int] = mapped_column(Integer, default=0)
    topup_delta: Mapped[int] = mapped_column(Integer, default=0)
    reservation_id: Mapped[str | None] = mapped_column(String(36), default=None)
    note: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

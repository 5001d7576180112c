"""Credit balances, holds, the append-only money ledger, and usage by outcome."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from shared.db.base import Base, UTCDateTime, utcnow

ENTRY_GRANT = "grant"
ENTRY_RENEWAL = "renewal"
ENTRY_TOPUP = "topup"
ENTRY_HOLD = "hold"
ENTRY_REFUND = "refund"

# How one classification ended. Found and not found are paid for; the others
# were refunded.
OUTCOME_FOUND = "found"
OUTCOME_NOT_FOUND = "not_found"
OUTCOME_FAILED = "failed"
OUTCOME_CANCELLED = "cancelled"
OUTCOME_RATE_LIMITED = "rate_limited"
PAID_OUTCOMES = (OUTCOME_FOUND, OUTCOME_NOT_FOUND)
REFUND_OUTCOMES = (OUTCOME_FAILED, OUTCOME_CANCELLED, OUTCOME_RATE_LIMITED)
OUTCOMES = PAID_OUTCOMES + REFUND_OUTCOMES


class CreditBalance(Base):
    __tablename__ = "credit_balances"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    monthly: Mapped[int] = mapped_column(Integer)
    monthly_allowance: Mapped[int] = mapped_column(Integer)
    topup: Mapped[int] = mapped_column(Integer)
    # Billing cycles are whole months from this moment: the anchor of every renewal.
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime)
    renews_at: Mapped[datetime] = mapped_column(UTCDateTime)

    @property
    def total(self) -> int:
        return self.monthly + self.topup


class CreditHold(Base):
    """Credits taken from a balance for `size` pieces of work; each unit ends once.

    A unit ends consumed (paid) or refunded; `consumed + refunded` never
    exceeds `size`, and only changes under the account's balance lock.
    """

    __tablename__ = "credit_holds"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    monthly: Mapped[int] = mapped_column(Integer)
    topup: Mapped[int] = mapped_column(Integer)
    # The end of the billing cycle the monthly part came from: monthly credits
    # are refunded only into that cycle.
    renews_at: Mapped[datetime] = mapped_column(UTCDateTime)
    consumed: Mapped[int] = mapped_column(Integer, default=0)
    refunded: Mapped[int] = mapped_column(Integer, default=0)
    # After this moment the units still open go back (work that never reported,
    # a crashed process); None when the owner ends every unit itself (a bulk job).
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    @property
    def size(self) -> int:
        return self.monthly + self.topup

    @property
    def open_units(self) -> int:
        return self.size - self.consumed - self.refunded


class LedgerEntry(Base):
    """One money movement; each balance is the sum of its entries' deltas."""

    __tablename__ = "credit_ledger"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    monthly_delta: Mapped[int] = mapped_column(Integer, default=0)
    topup_delta: Mapped[int] = mapped_column(Integer, default=0)
    # Not a foreign key: the ledger outlives the holds it mentions.
    hold_id: Mapped[str | None] = mapped_column(String(36), default=None)
    note: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UsageRecord(Base):
    """`count` classifications of an account that ended with `outcome` on `day` (UTC)."""

    __tablename__ = "credit_usage"
    __table_args__ = (Index("ix_credit_usage_account_id_day", "account_id", "day"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    # The UTC day, stored: grouping by it is then the same SQL on every database.
    day: Mapped[date] = mapped_column(Date)
    outcome: Mapped[str] = mapped_column(String(16))
    count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

"""Accounts and their API keys."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from shared.db.base import Base, UTCDateTime, utcnow


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    # None means the deployment's default limit.
    per_minute: Mapped[int | None] = mapped_column(Integer, default=None)
    per_hour: Mapped[int | None] = mapped_column(Integer, default=None)
    per_day: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A dashboard session names the generation it began in; signing out (or
    # revoke_sessions) moves it on, so every cookie issued before is refused.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    # The first characters of the key, to recognise it in lists; never enough to use it.
    prefix: Mapped[str] = mapped_column(String(32), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

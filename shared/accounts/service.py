"""Creating accounts, issuing and revoking keys, and authenticating requests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from shared.accounts.errors import (
    AccountExists,
    AccountNotFound,
    InvalidApiKey,
    KeyLimitReached,
    KeyNotFound,
)
from shared.accounts.keys import display_prefix, generate_key, hash_key, looks_like_key
from shared.accounts.models import Account, ApiKey
from shared.db.base import utcnow

MAX_ACTIVE_KEYS = 3
MAX_KEY_NAME_LENGTH = 100
LAST_USED_PRECISION_SECONDS = 60


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key as created: the only moment its full value exists outside the client."""

    id: int
    name: str
    prefix: str
    value: str


@dataclass(frozen=True, slots=True)
class RateLimits:
    per_minute: int
    per_hour: int
    per_day: int


def normalise_email(email: str) -> str:
    return email.strip().lower()


def create_account(
    session: Session,
    email: str,
    *,
    per_minute: int | None = None,
    per_hour: int | None = None,
    per_day: int | None = None,
    password_hash: str | None = None,
) -> Account:
    account = Account(
        email=normalise_email(email),
        per_minute=per_minute,
        per_hour=per_hour,
        per_day=per_day,
        password_hash=password_hash,
    )
    session.add(account)
    try:
        session.flush()
    except IntegrityError as exc:
        raise AccountExists(f"An account with the email {account.email} exists already.") from exc
    return account


def get_account(session: Session, email: str) -> Account:
    account = session.scalar(select(Account).where(Account.email == normalise_email(email)))
    if account is None:
        raise AccountNotFound(f"No account with the email {normalise_email(email)}.")
    return account


def revoke_sessions(session: Session, account_id: int) -> None:
    """End every dashboard session of the account, on every front, from this commit on."""
    session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(session_generation=Account.session_generation + 1)
    )


class OwnLimits(Protocol):
    """An account's own limits (an Account, a KeyHolder); None: the defaults."""

    @property
    def per_minute(self) -> int | None: ...

    @property
    def per_hour(self) -> int | None: ...

    @property
    def per_day(self) -> int | None: ...


def rate_limits(account: OwnLimits, defaults: RateLimits) -> RateLimits:
    return RateLimits(
        per_minute=account.per_minute or defaults.per_minute,
        per_hour=account.per_hour or defaults.per_hour,
        per_day=account.per_day or defaults.per_day,
    )


def active_keys(session: Session, account_id: int) -> list[ApiKey]:
    return list(
        session.scalars(
            select(ApiKey)
            .where(ApiKey.account_id == account_id, ApiKey.deleted_at.is_(None))
            .order_by(ApiKey.created_at, ApiKey.id)
        )
    )


def create_key(session: Session, account: Account, name: str, support_email: str) -> IssuedKey:
    name = name.strip()
    if not name or len(name) > MAX_KEY_NAME_LENGTH:
        raise ValueError(f"A key name is 1 to {MAX_KEY_NAME_LENGTH} characters.")
    _lock_account(session, account.id)
    if len(active_keys(session, account.id)) >= MAX_ACTIVE_KEYS:
        raise KeyLimitReached(
            f"An account may hold at most {MAX_ACTIVE_KEYS} active API keys. "
            f"Delete one, or ask {support_email} for more."
        )
    value = generate_key()
    key = ApiKey(
        account_id=account.id, name=name, prefix=display_prefix(value), key_hash=hash_key(value)
    )
    session.add(key)
    session.flush()
    return IssuedKey(id=key.id, name=key.name, prefix=key.prefix, value=value)


def delete_key(session: Session, account: Account, prefix_or_id: str) -> ApiKey:
    """Revoke a key; it is refused by every process from the moment this commits."""
    condition = (
        ApiKey.id == int(prefix_or_id) if prefix_or_id.isdigit() else ApiKey.prefix == prefix_or_id
    )
    matches = list(
        session.scalars(
            select(ApiKey).where(
                ApiKey.account_id == account.id, ApiKey.deleted_at.is_(None), condition
            )
        )
    )
    if len(matches) != 1:
        raise KeyNotFound(
            f"No single active key {prefix_or_id!r} on {account.email}"
            + (" (the prefix matches several keys)." if matches else ".")
        )
    key = matches[0]
    key.deleted_at = utcnow()
    return key


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """The account behind an API key, as much of it as a request needs."""

    account_id: int
    key_id: int
    key_last_used_at: datetime | None
    per_minute: int | None
    per_hour: int | None
    per_day: int | None


def authenticate(session: Session, authorization: str | None) -> KeyHolder:
    """The account behind an `Authorization: Bearer <key>` header, or InvalidApiKey.

    The database is asked every time: no cache may keep a deleted key alive.
    """
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not looks_like_key(token):
        raise InvalidApiKey()
    row = session.connection().execute(_KEY_HOLDER, {"key_hash": hash_key(token)}).first()
    if row is None:
        raise InvalidApiKey()
    return KeyHolder(*row)


def touch_key(session: Session, holder: KeyHolder) -> None:
    """Note that a key was used, at most once a minute: the dashboard shows no finer."""
    now = utcnow()
    not_since = now - timedelta(seconds=LAST_USED_PRECISION_SECONDS)
    # The key was just read: most requests skip the write and its round trip.
    if holder.key_last_used_at is not None and holder.key_last_used_at >= not_since:
        return
    session.connection().execute(
        _TOUCH_KEY, {"key": holder.key_id, "now": now, "not_since": not_since}
    )


# Every API request runs these two: built once, as Core statements (building
# a statement and loading ORM objects cost more CPU than the query itself).
_KEYS = cast(Table, ApiKey.__table__)
_ACCOUNTS = cast(Table, Account.__table__)
_KEY_HOLDER = (
    select(
        _ACCOUNTS.c.id,
        _KEYS.c.id,
        _KEYS.c.last_used_at,
        _ACCOUNTS.c.per_minute,
        _ACCOUNTS.c.per_hour,
        _ACCOUNTS.c.per_day,
    )
    .join_from(_KEYS, _ACCOUNTS, _KEYS.c.account_id == _ACCOUNTS.c.id)
    .where(_KEYS.c.key_hash == bindparam("key_hash"), _KEYS.c.deleted_at.is_(None))
)
_TOUCH_KEY = (
    update(_KEYS)
    .where(
        _KEYS.c.id == bindparam("key"),
        _KEYS.c.last_used_at.is_(None) | (_KEYS.c.last_used_at < bindparam("not_since")),
    )
    .values(last_used_at=bindparam("now"))
)


def _lock_account(session: Session, account_id: int) -> None:
    # A no-op write takes the row lock on PostgreSQL and the write lock on
    # SQLite, so that concurrent key creations are counted one after another.
    session.execute(update(Account).where(Account.id == account_id).values(id=Account.id))


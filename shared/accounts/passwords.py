"""Dashboard passwords: argon2id hashes (argon2-cffi's recommended parameters)."""

from __future__ import annotations

import functools
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_PASSWORD_LENGTH = 8
# argon2 hashes any length, but a megabyte "password" is a denial of service.
MAX_PASSWORD_LENGTH = 1024

_hasher = PasswordHasher()


def check_password_rules(password: str) -> None:
    """ValueError with a message for the person choosing the password."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"A password is at least {MIN_PASSWORD_LENGTH} characters.")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ValueError(f"A password is at most {MAX_PASSWORD_LENGTH} characters.")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """False for a wrong password, and for no hash (no such account, or one made by an operator).

    Without a hash a dummy one is verified all the same, so that the answer
    takes as long: the time must not tell which emails have an account.
    """
    if len(password) > MAX_PASSWORD_LENGTH:
        return False
    try:
        matches = _hasher.verify(password_hash or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    return matches and bool(password_hash)


@functools.cache
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(32))

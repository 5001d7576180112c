"""Dashboard passwords: argon2id hashes (argon2-cffi's recommended parameters)."""

from __future__ import annotations

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
    """False for a wrong password, and for an account that has none (made by an operator)."""
    if not password_hash or len(password) > MAX_PASSWORD_LENGTH:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False

"""API key values: generation, hashing and recognising their shape.

A key is `txn_` followed by 43 URL-safe characters (32 random bytes, 256 bits).
Only its SHA-256 is stored: a key carries enough entropy that a slow hash adds
nothing, and a fast one keeps authentication cheap on every request.
"""

from __future__ import annotations

import hashlib
import re
import secrets

KEY_PREFIX = "txn_"
KEY_RANDOM_BYTES = 32
DISPLAY_PREFIX_LENGTH = len(KEY_PREFIX) + 8
_KEY_PATTERN = re.compile(r"^txn_[A-Za-z0-9_-]{43}$")


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_RANDOM_BYTES)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def display_prefix(key: str) -> str:
    return key[:DISPLAY_PREFIX_LENGTH]


def looks_like_key(value: str) -> bool:
    return bool(_KEY_PATTERN.match(value))

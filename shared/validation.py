"""Checks any request input passes before a parser, the database or a worker sees it.

One place for what the synchronous endpoint, bulk jobs and the dashboard all
need, so that hostile input is a 400 naming what is wrong, never a 500:
JSON nested too deep for a recursive parser, text PostgreSQL cannot store
(NUL) or UTF-8 cannot encode (lone surrogates), numbers in query strings.
"""

from __future__ import annotations

import json
import re

from shared.classification.messages import BAD_JSON

# Deeper than any request needs (a bulk item's extra fields included), far
# below the depth at which Python's json module runs out of recursion.
MAX_JSON_DEPTH = 32
# A JSON string, matched possessively: an unterminated one cannot backtrack.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_DIGITS = re.compile(r"[0-9]{1,18}")


class InvalidRequest(Exception):
    """The input breaks a rule; the message names the field and the rule."""


class BodyTooLarge(Exception):
    """The request body is over the size allowed."""


def parse_json(body: bytes | str) -> object:
    """The JSON value, or InvalidRequest: malformed, or nested deeper than MAX_JSON_DEPTH."""
    try:
        text = body if isinstance(body, str) else body.decode(json.detect_encoding(body))
    except UnicodeDecodeError as exc:
        raise InvalidRequest(BAD_JSON) from exc
    check_json_depth(text)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidRequest(BAD_JSON) from exc


def check_json_depth(text: str) -> None:
    """Count brackets outside strings, without recursing: the parser may then recurse safely."""
    depth = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            raise InvalidRequest(f"The JSON is nested deeper than {MAX_JSON_DEPTH} levels.")


def check_text(label: str, value: str) -> str:
    """`value`, or InvalidRequest naming `label` when it holds a lone surrogate or a NUL.

    JSON's \\ud800 escapes decode to strings UTF-8 cannot encode; PostgreSQL
    refuses NUL in text. Both would fail far from the request, as a 500.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        valid = False
    else:
        valid = "\x00" not in value
    if not valid:
        raise InvalidRequest(f"{label} must be valid Unicode text without NUL characters.")
    return value


def bounded_int(label: str, value: str, minimum: int, maximum: int) -> int:
    """An ASCII decimal within [minimum, maximum] (not "²", not 10**30), or InvalidRequest."""
    if not _DIGITS.fullmatch(value) or not minimum <= int(value) <= maximum:
        raise InvalidRequest(f"{label} must be a number from {minimum} to {maximum}.")
    return int(value)

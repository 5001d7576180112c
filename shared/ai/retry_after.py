"""How long a 429 from the upstream AI asks us to wait, read from its headers.

In order: `retry-after-ms`, `Retry-After` (seconds or an HTTP date), then the
OpenAI `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` durations
("1s", "6m0s", "20ms") of the limits whose remaining count is zero.
"""

from __future__ import annotations

import re
import time
from email.utils import parsedate_to_datetime
from typing import Mapping

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_LIMITS = ("requests", "tokens")


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration such as "1m30.5s" or "250ms"."""
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text.strip():
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _retry_after(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait the headers ask for, or None when they name none."""
    lowered = {name.lower(): value for name, value in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    if "retry-after" in lowered:
        seconds = _retry_after(lowered["retry-after"])
        if seconds is not None:
            return max(0.0, seconds)
    resets = [
        parse_duration(lowered.get(f"x-ratelimit-reset-{limit}", ""))
        for limit in _LIMITS
        if lowered.get(f"x-ratelimit-remaining-{limit}") == "0"
    ]
    known = [seconds for seconds in resets if seconds is not None]
    return max(known) if known else None

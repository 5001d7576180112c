"""Reading the wait out of a 429's headers."""

from __future__ import annotations

from email.utils import formatdate
import time

import pytest

from shared.ai.retry_after import parse_duration, retry_after_seconds


@pytest.mark.parametrize(
    "text, seconds",
    [("1s", 1.0), ("250ms", 0.25), ("6m0s", 360.0), ("1m30.5s", 90.5), ("1h", 3600.0)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5", "1s and more"])
def test_not_durations(text):
    assert parse_duration(text) is None


def test_retry_after_ms_comes_first():
    assert retry_after_seconds({"retry-after-ms": "1500", "Retry-After": "2"}) == 1.5


def test_retry_after_in_seconds_or_as_a_date():
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    in_a_minute = formatdate(time.time() + 60, usegmt=True)
    assert 55 < retry_after_seconds({"Retry-After": in_a_minute}) <= 60


def test_reset_headers_count_only_for_an_exhausted_limit():
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "2s",
        "x-ratelimit-remaining-tokens": "5000",
        "x-ratelimit-reset-tokens": "30s",
    }
    assert retry_after_seconds(headers) == 2.0
    headers["x-ratelimit-remaining-tokens"] = "0"
    assert retry_after_seconds(headers) == 30.0


def test_no_wait_named():
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"Retry-After": "whenever"}) is None

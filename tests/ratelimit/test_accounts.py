"""The accounts' rolling-window limits, on real Redis and in-process."""

from __future__ import annotations

import uuid

import pytest

from shared.accounts.service import RateLimits
from shared.ratelimit.accounts import InProcessAccountLimiter, RedisAccountLimiter, retry_after_header
from tests.conftest import REDIS_URL


@pytest.fixture(params=["redis", "in-process"])
def make_limiter(request):
    made = []

    def make():
        if request.param == "redis":
            limiter = RedisAccountLimiter(REDIS_URL, f"taxonomist-test-{uuid.uuid4().hex[:8]}")
        else:
            limiter = InProcessAccountLimiter()
        made.append(limiter)
        return limiter

    yield make


def hits(limiter, account_id, limits, count):
    return [limiter.hit(account_id, limits) for _ in range(count)]


def test_the_minute_limit_refuses_with_a_wait_within_the_minute(make_limiter):
    results = hits(make_limiter(), 1, RateLimits(per_minute=3, per_hour=100, per_day=1000), 5)
    assert results[:3] == [None, None, None]
    assert all(0 < wait <= 60 for wait in results[3:])


def test_the_hour_and_day_limits_apply_too(make_limiter):
    hour = hits(make_limiter(), 1, RateLimits(per_minute=100, per_hour=2, per_day=1000), 3)
    assert hour[:2] == [None, None] and 60 < hour[2] <= 3600
    day = hits(make_limiter(), 1, RateLimits(per_minute=100, per_hour=100, per_day=2), 3)
    assert day[:2] == [None, None] and 3600 < day[2] <= 86400


def test_accounts_are_limited_separately(make_limiter):
    limiter = make_limiter()
    limits = RateLimits(per_minute=1, per_hour=10, per_day=10)
    first, other, again = [
        *hits(limiter, 1, limits, 1),
        *hits(limiter, 2, limits, 1),
        *hits(limiter, 1, limits, 1),
    ]
    assert first is None and other is None and again is not None


def test_refused_requests_are_not_counted(make_limiter):
    limiter = make_limiter()
    burst = hits(limiter, 1, RateLimits(per_minute=2, per_hour=100, per_day=100), 10)
    after = hits(limiter, 1, RateLimits(per_minute=100, per_hour=3, per_day=100), 2)
    assert burst.count(None) == 2
    # Had the eight refusals been logged, the hour would be full already.
    assert after[0] is None and after[1] is not None


@pytest.mark.parametrize("wait, header", [(0.01, "1"), (1.0, "1"), (1.2, "2"), (59.5, "60")])
def test_retry_after_is_an_integer_of_at_least_one(wait, header):
    assert retry_after_header(wait) == header

"""Helpers of the upstream AI tests (imported by conftest.py and the tests)."""

from __future__ import annotations

from starlette.datastructures import Secret

from shared.ai.fake_upstream import FakeUpstream
from shared.ai.openai_selector import RetryPolicy
from shared.ai.bucket import BucketLimits
from shared.settings import Settings
from shared.taxonomy.models import Candidate, Category
from tests.conftest import REDIS_URL  # noqa: F401  (the helpers' users import it from here)

TEST_API_KEY = "sk-test-not-a-real-key"
# Short enough that retries stay fast, long enough for a loaded 2-core machine.
TEST_TIMEOUT_SECONDS = 1.0
FAST_RETRY = RetryPolicy(attempts=3, total_seconds=10.0, backoff_initial_seconds=0.02)
# Limits no test reaches unless it means to.
UNLIMITED = BucketLimits(requests_per_minute=1_000_000, tokens_per_minute=1_000_000_000)


def make_candidates(count: int = 5) -> list[Candidate]:
    return [
        Candidate(
            Category(
                id=str(100 + number),
                name=f"Leaf {number}",
                path=f"Apparel & Accessories > Shoes > Leaf {number}",
                parent_id="1",
                depth=3,
                is_leaf=True,
            ),
            score=1.0 - number / 10,
        )
        for number in range(count)
    ]


def upstream_settings(fake: FakeUpstream, **overrides) -> Settings:
    """Settings of the openai selector against `fake` (or any server with a `url`)."""
    return Settings(
        ai_provider="openai",
        openai_base_url=fake.url,
        openai_api_key=Secret(TEST_API_KEY),
        **{"ai_timeout_seconds": TEST_TIMEOUT_SECONDS, **overrides},
    )

"""Fixtures of the upstream AI tests: the fake upstream on loopback, candidates,
selectors wired to both, and a Redis key prefix of each test's own."""

from __future__ import annotations


import pytest

from ai_upstream_helpers import FAST_RETRY, UNLIMITED, make_candidates, upstream_settings
from shared.ai.fake_upstream import FakeUpstream
from shared.ai.openai_selector import OpenAISelector
from shared.ai.bucket import LocalAIBucket
from shared.taxonomy.models import Candidate


@pytest.fixture(scope="session")
def fake_upstream_server():
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def fake_upstream(fake_upstream_server: FakeUpstream) -> FakeUpstream:
    fake_upstream_server.configure()
    yield fake_upstream_server
    fake_upstream_server.configure()


@pytest.fixture
def candidates() -> list[Candidate]:
    return make_candidates()


@pytest.fixture
def bucket() -> LocalAIBucket:
    return LocalAIBucket(UNLIMITED)


@pytest.fixture
def selector(fake_upstream: FakeUpstream, bucket: LocalAIBucket) -> OpenAISelector:
    return OpenAISelector.from_settings(upstream_settings(fake_upstream), bucket, retry=FAST_RETRY)


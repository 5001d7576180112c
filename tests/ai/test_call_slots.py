"""The openai selector under AI_MAX_CONCURRENCY in one process (the embedded
mode's semaphore), against the fake upstream slowed so that calls overlap.
The fleet's Redis slots: tests/ai/test_upstream_fleet.py."""

from __future__ import annotations

import threading

import pytest

from ai_upstream_helpers import FAST_RETRY, UNLIMITED, upstream_settings
from shared.ai.errors import AIRateLimited, AIUnavailable
from shared.ai.openai_selector import OpenAISelector
from shared.ai.bucket import LocalAIBucket
from shared.ratelimit.concurrency import LocalCallSlots, make_call_slots

PRODUCT = "Trail running shoe, waterproof, size 42"
CAP = 2
THREADS = 6
CALLS_PER_THREAD = 3
SLOW_LATENCY_MS = 200
SHORT_WAIT_SECONDS = 0.2


def capped_selector(fake, call_slots, max_wait_seconds=None) -> OpenAISelector:
    return OpenAISelector.from_settings(
        upstream_settings(fake),
        LocalAIBucket(UNLIMITED),
        max_wait_seconds=max_wait_seconds,
        retry=FAST_RETRY,
        call_slots=call_slots,
    )


@pytest.mark.parametrize("max_concurrency", [CAP, 0])
def test_threads_never_have_more_calls_in_flight_than_the_cap(fake_upstream, candidates, max_concurrency):
    fake_upstream.configure(latency_ms=SLOW_LATENCY_MS)
    call_slots = make_call_slots(upstream_settings(fake_upstream, ai_max_concurrency=max_concurrency))
    selector = capped_selector(fake_upstream, call_slots, max_wait_seconds=30)
    answers: list[str | None] = []

    def classify() -> None:
        for _ in range(CALLS_PER_THREAD):
            answers.append(selector.select(PRODUCT, candidates, None).category_id)

    threads = [threading.Thread(target=classify) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert answers == [candidates[0].category.id] * THREADS * CALLS_PER_THREAD
    if max_concurrency:
        assert fake_upstream.max_in_flight == CAP
    else:  # the control: uncapped, the same threads do go above it
        assert fake_upstream.max_in_flight > CAP


def test_no_slot_within_the_wait_is_a_rate_limit_and_sends_nothing(fake_upstream, candidates):
    call_slots = LocalCallSlots(1)
    held = call_slots.acquire(0)
    selector = capped_selector(fake_upstream, call_slots, max_wait_seconds=SHORT_WAIT_SECONDS)

    with pytest.raises(AIRateLimited) as refused:
        selector.select(PRODUCT, candidates, None)

    assert refused.value.retry_after == selector.timeout_seconds
    assert fake_upstream.stats["received"] == 0
    call_slots.release(held)
    assert selector.select(PRODUCT, candidates, None).category_id == candidates[0].category.id


def test_a_failed_call_gives_its_slot_back(fake_upstream, candidates):
    fake_upstream.script("500", "500", "500")
    call_slots = LocalCallSlots(1)
    selector = capped_selector(fake_upstream, call_slots, max_wait_seconds=SHORT_WAIT_SECONDS)

    with pytest.raises(AIUnavailable):
        selector.select(PRODUCT, candidates, None)

    assert selector.select(PRODUCT, candidates, None).category_id == candidates[0].category.id

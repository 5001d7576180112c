"""The upstream AI path end to end: HTTP through a real front, a Celery worker
with four pool processes on Redis, credits in PostgreSQL, and the fake upstream.

Every pool process builds its own OpenAISelector on the fleet's Redis bucket,
as in production. One stack serves the module; each test resets the fake and
the bucket, and has a customer of its own.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest

from ai_upstream_helpers import UNLIMITED
from api.errors import INTERNAL_ERROR, RATE_LIMITED
from shared.ai.fake_upstream import FakeUpstream
from shared.settings import Settings
from shared.db.migrate import open_database
from shared.ai.bucket import KEY_SUFFIX
from tests.conftest import Customer, Stack, delete_redis_keys, production_env
from tests.servers import Process, Service

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = "Stainless steel chef knife, 8 inch"
CLIENT_TIMEOUT_SECONDS = 60
POOL_PROCESSES = 4
# AI_REQUESTS_PER_MINUTE: 10 a second, a bucket burst of 5 (the fake's is 10);
# a burst above POOL_PROCESSES, so that all of them may call at once.
STACK_RPM = 600
# AI_TOKENS_PER_MINUTE: out of reach, so that the request limit is the one
# pressed on (the default 200,000 holds these prompts to about 5 a second).
STACK_TPM = UNLIMITED.tokens_per_minute
# AI_MAX_WAIT_SECONDS: a synchronous request waits out a pause shorter than this.
MAX_WAIT_SECONDS = 3
AI_TIMEOUT_SECONDS = 2
# Enough requests to press on the limit for a few seconds past the burst.
LOAD_REQUESTS = 40
FAKE_BURST_SECONDS = 2.0
# The control's fake takes a quarter of our limit, as if our bucket were set
# four times too high; twice our burst is enough to meet its limit.
CONTROL_RPM = STACK_RPM // 4
CONTROL_REQUESTS = 10
# Customers of the load tests must not meet their own account limits.
GENEROUS_LIMITS = {"per_minute": 1000, "per_hour": 1000}
# A scripted 429 that a synchronous request waits out, and the latency that
# keeps the other pool processes mid-call when it comes back.
PAUSE_SECONDS = 2
PAUSE_LATENCY_MS = 100
PAUSE_REQUESTS = 8
# Calls already on the wire when the pause is set may still arrive this late.
IN_FLIGHT_SECONDS = 0.3
# The fake's clock (this process) and the pause's (the Redis server) differ
# by the time a reply takes to travel.
CLOCK_SLACK_SECONDS = 0.05
# A scripted 429 longer than a synchronous request may wait.
TOO_LONG_SECONDS = MAX_WAIT_SECONDS + 2
# Bounds the wait for the pool processes to load their indexes.
READY_TIMEOUT_SECONDS = 120


@pytest.fixture(scope="module")
def ai_stack(
    tmp_path_factory, postgres_url, built_indexes, fake_upstream_server: FakeUpstream
) -> Stack:
    """A front and one worker of POOL_PROCESSES pool processes on the fake upstream."""
    folder = tmp_path_factory.mktemp("upstream-celery")
    namespace = f"taxonomist-test-ai-{uuid.uuid4().hex[:8]}"
    env = production_env(
        postgres_url,
        namespace,
        AI_PROVIDER="openai",
        OPENAI_BASE_URL=fake_upstream_server.url,
        OPENAI_API_KEY="sk-test",
        AI_REQUESTS_PER_MINUTE=str(STACK_RPM),
        AI_TOKENS_PER_MINUTE=str(STACK_TPM),
        AI_MAX_WAIT_SECONDS=str(MAX_WAIT_SECONDS),
        AI_TIMEOUT_SECONDS=str(AI_TIMEOUT_SECONDS),
    )
    open_database(postgres_url).dispose()  # migrated before the processes start
    worker = Process(
        ["worker", "--concurrency", str(POOL_PROCESSES)], env, folder / "worker.log"
    )
    front = Service(env, folder / "front.log")
    stack = Stack(front.url, env, postgres_url, [front])
    try:
        wait_until_classifying(stack, worker)
        yield stack
    finally:
        for process in (front, worker):
            process.stop()
        delete_redis_keys(namespace)


def wait_until_classifying(stack: Stack, worker: Process) -> None:
    """Until one request per pool process has been answered 200 (each process
    loads the taxonomy indexes when it starts)."""
    # At most one round a second, each of POOL_PROCESSES credits.
    customer = stack.customer(monthly=READY_TIMEOUT_SECONDS * POOL_PROCESSES, **GENEROUS_LIMITS)
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if worker.popen.poll() is not None:
            raise RuntimeError(f"worker exited early:\n{worker.log()}")
        statuses = [r.status_code for r in classify_concurrently(stack, customer, POOL_PROCESSES)]
        if statuses == [200] * POOL_PROCESSES:
            return
        time.sleep(1)
    raise RuntimeError(f"the worker did not classify in time:\n{worker.log()}")


@pytest.fixture
def upstream(ai_stack: Stack, fake_upstream: FakeUpstream) -> FakeUpstream:
    """The fake, reset, in front of a full bucket with no pause (as after a quiet minute)."""
    delete_redis_keys(f"{ai_stack.env['REDIS_NAMESPACE']}:{KEY_SUFFIX}")
    return fake_upstream


def request_body(fallback_to_best_guess: bool) -> dict:
    return {"product": PRODUCT, "fallbackToBestGuess": fallback_to_best_guess}


def classify(
    stack: Stack, customer: Customer, fallback_to_best_guess: bool = True
) -> httpx.Response:
    return httpx.post(
        stack.url + ENDPOINT,
        json=request_body(fallback_to_best_guess),
        headers=customer.headers,
        timeout=CLIENT_TIMEOUT_SECONDS,
    )


def classify_concurrently(stack: Stack, customer: Customer, count: int) -> list[httpx.Response]:
    async def fire():
        limits = httpx.Limits(max_connections=count)
        async with httpx.AsyncClient(timeout=CLIENT_TIMEOUT_SECONDS, limits=limits) as client:
            return await asyncio.gather(
                *(
                    client.post(
                        stack.url + ENDPOINT, json=request_body(True), headers=customer.headers
                    )
                    for _ in range(count)
                )
            )

    return asyncio.run(fire())


def test_concurrent_requests_draw_no_429_from_an_upstream_at_the_same_limit(ai_stack, upstream):
    # Same rate; a wider burst than a provider's only because the fake's clock
    # runs in this busy test process, where arrivals can bunch by a second.
    upstream.configure(rpm=STACK_RPM, burst_seconds=FAKE_BURST_SECONDS)
    customer = ai_stack.customer(monthly=LOAD_REQUESTS, **GENEROUS_LIMITS)

    responses = classify_concurrently(ai_stack, customer, LOAD_REQUESTS)

    assert [r.status_code for r in responses] == [200] * LOAD_REQUESTS
    assert all(r.json()["confidenceLevel"] == "AI" for r in responses)
    assert upstream.stats == {
        "received": LOAD_REQUESTS,
        "answered": LOAD_REQUESTS,
        "rate_limited": 0,
        "errors": 0,
    }
    assert ai_stack.balance(customer).total == 0


def test_an_upstream_below_the_bucket_answers_429s_through_the_same_path(ai_stack, upstream):
    """The control: the fake does enforce its limit on calls from the workers,
    so the zero above is the bucket's doing."""
    upstream.configure(rpm=CONTROL_RPM)
    customer = ai_stack.customer(monthly=CONTROL_REQUESTS, **GENEROUS_LIMITS)

    responses = classify_concurrently(ai_stack, customer, CONTROL_REQUESTS)

    assert upstream.stats["rate_limited"] > 0
    # Whatever each request's fate, a 200 costs one credit and a 429 nothing.
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {200, 429}
    assert ai_stack.balance(customer).total == statuses.count(429)


def test_a_429_pauses_every_pool_process_for_its_retry_after(ai_stack, upstream):
    upstream.configure(latency_ms=PAUSE_LATENCY_MS)
    upstream.script(f"429:{PAUSE_SECONDS}")
    customer = ai_stack.customer(monthly=PAUSE_REQUESTS, **GENEROUS_LIMITS)

    responses = classify_concurrently(ai_stack, customer, PAUSE_REQUESTS)

    # The pause is shorter than AI_MAX_WAIT_SECONDS: every request waited it out.
    assert [r.status_code for r in responses] == [200] * PAUSE_REQUESTS
    assert ai_stack.balance(customer).total == 0
    assert upstream.stats == {
        "received": PAUSE_REQUESTS + 1,
        "answered": PAUSE_REQUESTS,
        "rate_limited": 1,
        "errors": 0,
    }
    first, *others = upstream.received
    after = [item.at - first.at for item in others]
    ends = PAUSE_SECONDS - CLOCK_SLACK_SECONDS
    assert [delay for delay in after if IN_FLIGHT_SECONDS < delay < ends] == []
    # Every pool process had a call held by the pause, and sent it once the pause was over.
    released = [delay for delay in after if ends <= delay < PAUSE_SECONDS + IN_FLIGHT_SECONDS]
    assert len(released) >= POOL_PROCESSES


def test_a_wait_past_max_wait_is_a_429_with_retry_after_and_a_refund(ai_stack, upstream):
    upstream.script(f"429:{TOO_LONG_SECONDS}")
    customer = ai_stack.customer(monthly=2)

    # The first meets the upstream's 429; the second, sent during the pause,
    # is refused by the bucket without a call.
    responses = [classify(ai_stack, customer) for _ in range(2)]

    for response in responses:
        assert (response.status_code, response.text) == (429, RATE_LIMITED)
        retry_after = response.headers["Retry-After"]
        assert retry_after.isdigit()
        assert TOO_LONG_SECONDS - 1 <= int(retry_after) <= TOO_LONG_SECONDS
    assert upstream.stats["received"] == 1
    assert ai_stack.balance(customer).total == 2


def test_500s_until_the_last_attempt_are_a_500_and_a_refund(ai_stack, upstream):
    upstream.script(*["500"] * Settings.ai_attempts)
    customer = ai_stack.customer(monthly=1)

    response = classify(ai_stack, customer)

    assert (response.status_code, response.text) == (500, INTERNAL_ERROR)
    assert upstream.stats == {
        "received": Settings.ai_attempts,
        "answered": 0,
        "rate_limited": 0,
        "errors": Settings.ai_attempts,
    }
    assert ai_stack.balance(customer).total == 1


@pytest.mark.parametrize("reply", ["malformed", "null", "id:not-a-candidate"])
def test_an_answer_that_is_no_candidate_is_no_decision_for_one_credit(ai_stack, upstream, reply):
    upstream.script(reply)
    customer = ai_stack.customer(monthly=2)

    response = classify(ai_stack, customer, fallback_to_best_guess=False)

    assert response.status_code == 200
    body = response.json()
    assert (body["categoryFound"], body["categoryId"], body["confidenceLevel"]) == (
        False,
        None,
        "None",
    )
    assert upstream.stats["received"] == 1  # not retried
    assert ai_stack.balance(customer).total == 1

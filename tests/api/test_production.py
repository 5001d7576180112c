"""Production shape: two fronts and a Celery worker over PostgreSQL and Redis."""

from __future__ import annotations

import asyncio

import httpx

from api.errors import INSUFFICIENT_CREDITS, INTERNAL_ERROR, RATE_LIMITED, UNAUTHORIZED
from tests.conftest import Stack
from tests.servers import Service, run_cli

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = {"product": "Stainless steel chef knife, 8 inch", "fallbackToBestGuess": True}


def post(url: str, customer) -> httpx.Response:
    return httpx.post(url + ENDPOINT, json=PRODUCT, headers=customer.headers, timeout=60)


def test_both_fronts_classify_through_the_worker(production: Stack):
    customer = production.customer(monthly=2)
    for front in production.fronts:
        response = post(front.url, customer)
        assert response.status_code == 200 and response.json()["categoryFound"] is True
    assert production.balance(customer).total == 0


def test_a_deleted_key_is_refused_at_once_by_every_front(production: Stack):
    customer = production.customer()
    assert [post(front.url, customer).status_code for front in production.fronts] == [200, 200]
    listed = run_cli(["keys", "list", customer.email], production.env)
    assert listed.returncode == 0, listed.stderr
    prefix = listed.stdout.split("\t")[1].rstrip("…")
    deleted = run_cli(["keys", "delete", customer.email, prefix], production.env)
    assert deleted.returncode == 0, deleted.stderr
    for front in production.fronts:
        response = post(front.url, customer)
        assert (response.status_code, response.text) == (401, UNAUTHORIZED)


def test_the_rate_limit_is_shared_by_the_fronts(production: Stack):
    customer = production.customer(per_minute=3)
    urls = [front.url for front in production.fronts]
    statuses = [post(urls[n % 2], customer).status_code for n in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    assert production.balance(customer).total == 97


def test_200_concurrent_requests_spend_exactly_the_credits_available(production: Stack):
    customer = production.customer(monthly=30, topup=20, per_minute=1000, per_hour=1000)
    urls = [front.url for front in production.fronts]

    async def fire():
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            return await asyncio.gather(
                *(
                    client.post(urls[n % 2] + ENDPOINT, json=PRODUCT, headers=customer.headers)
                    for n in range(200)
                )
            )

    responses = asyncio.run(fire())
    statuses = [response.status_code for response in responses]
    assert statuses.count(200) == 50 and statuses.count(403) == 150
    assert {r.text for r in responses if r.status_code == 403} == {INSUFFICIENT_CREDITS}
    balance = production.balance(customer)
    assert (balance.monthly, balance.topup) == (0, 0)


def test_a_worker_that_never_answers_means_500_and_a_refund(production: Stack, tmp_path):
    # A front whose queue no worker consumes: a worker fleet that is down.
    env = dict(production.env, REDIS_NAMESPACE="taxonomist-test-no-workers", CLASSIFY_TIMEOUT_SECONDS="2")
    front = Service(env, tmp_path / "front.log")
    try:
        customer = production.customer(monthly=1)
        response = post(front.url, customer)
        assert (response.status_code, response.text) == (500, INTERNAL_ERROR)
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        assert "Traceback" not in response.text
        assert production.balance(customer).total == 1
    finally:
        front.stop()


def test_readiness_checks_database_and_broker(production: Stack):
    body = httpx.get(production.url + "/readyz").json()
    assert body["checks"] == {"database": True, "schema": True, "broker": True, "taxonomies": True}


def test_rate_limited_requests_cost_nothing_under_concurrency(production: Stack):
    customer = production.customer(monthly=100, per_minute=10)

    async def fire():
        async with httpx.AsyncClient(timeout=120) as client:
            return await asyncio.gather(
                *(client.post(production.url + ENDPOINT, json=PRODUCT, headers=customer.headers) for _ in range(30))
            )

    responses = asyncio.run(fire())
    statuses = [response.status_code for response in responses]
    assert statuses.count(200) == 10 and statuses.count(429) == 20
    assert {r.text for r in responses if r.status_code == 429} == {RATE_LIMITED}
    assert production.balance(customer).total == 90

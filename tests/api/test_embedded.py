"""The embedded mode under load and under upstream failure."""

from __future__ import annotations

import asyncio

import httpx

from api.errors import INTERNAL_ERROR
from tests.conftest import Stack, base_env, make_customer, balance_of
from tests.servers import Service, free_port

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = {"product": "Ceramic coffee mug 350 ml", "fallbackToBestGuess": True}


def test_200_concurrent_requests_spend_exactly_the_credits_available(embedded: Stack):
    customer = embedded.customer(monthly=20, topup=30, per_minute=1000, per_hour=1000)

    async def fire():
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(base_url=embedded.url, timeout=120, limits=limits) as client:
            return await asyncio.gather(
                *(client.post(ENDPOINT, json=PRODUCT, headers=customer.headers) for _ in range(200))
            )

    statuses = [response.status_code for response in asyncio.run(fire())]
    assert statuses.count(200) == 50 and statuses.count(403) == 150
    balance = embedded.balance(customer)
    assert (balance.monthly, balance.topup) == (0, 0)


def test_an_unreachable_ai_means_500_and_a_refund(tmp_path, built_indexes):
    database_url = f"sqlite:///{tmp_path / 'ai-down.sqlite3'}"
    env = base_env(
        DATABASE_URL=database_url,
        AI_PROVIDER="openai",
        OPENAI_BASE_URL=f"http://127.0.0.1:{free_port()}/v1",
        OPENAI_API_KEY="sk-test-not-a-secret",
        AI_TIMEOUT_SECONDS="1",
    )
    service = Service(env, tmp_path / "serve.log")
    try:
        customer = make_customer(database_url, monthly=1)
        response = httpx.post(service.url + ENDPOINT, json=PRODUCT, headers=customer.headers, timeout=120)
        assert (response.status_code, response.text) == (500, INTERNAL_ERROR)
        assert balance_of(database_url, customer.account_id).total == 1
        assert "sk-test-not-a-secret" not in service.log()
    finally:
        service.stop()

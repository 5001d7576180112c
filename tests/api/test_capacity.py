"""Many clients waiting at once on one front: pools wait for a free connection, never 500."""

from __future__ import annotations

import asyncio

import httpx

from tests.conftest import Stack
from tests.servers import Service

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = {"product": "Stainless steel chef knife, 8 inch", "fallbackToBestGuess": True}
AMPLE = 100_000
# Far beyond what the requests need even on a busy machine (about 20 s for
# 1,000 on the quiet 2-core VM, minutes when it is shared), so that an error
# can only come from a pool that refuses, not from a deadline.
LONG_DEADLINE_SECONDS = 300
# Ten database connections for the front's 40 threads: they wait for one,
# and the test leaves the shared PostgreSQL's 100 connections to the others.
SMALL_DATABASE_POOL = {
    "DATABASE_POOL_SIZE": "5",
    "DATABASE_MAX_OVERFLOW": "5",
    "DATABASE_POOL_TIMEOUT_SECONDS": str(LONG_DEADLINE_SECONDS),
}
LONG_DEADLINE = {"CLASSIFY_TIMEOUT_SECONDS": str(LONG_DEADLINE_SECONDS), **SMALL_DATABASE_POOL}


def fire_at_once(url: str, headers: dict, count: int) -> list[int]:
    async def fire():
        limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=LONG_DEADLINE_SECONDS + 30, limits=limits) as client:
            responses = await asyncio.gather(
                *(client.post(url + ENDPOINT, json=PRODUCT, headers=headers) for _ in range(count)),
                return_exceptions=True,
            )
        return [r.status_code if isinstance(r, httpx.Response) else type(r).__name__ for r in responses]

    return asyncio.run(fire())


def test_1000_clients_waiting_at_once_on_one_front_all_get_their_200(production: Stack, tmp_path):
    # Before: redis-py refused the 101st connection at once, 790 of 1,000 got 500.
    front = Service(dict(production.env, **LONG_DEADLINE), tmp_path / "front.log")
    try:
        customer = production.customer(monthly=AMPLE, per_minute=AMPLE, per_hour=AMPLE, per_day=AMPLE)
        statuses = fire_at_once(front.url, customer.headers, 1000)
    finally:
        front.stop()
    assert statuses.count(200) == 1000, {s: statuses.count(s) for s in set(statuses)}
    assert production.balance(customer).total == AMPLE - 1000


def test_requests_beyond_a_small_redis_pool_wait_for_a_connection(production: Stack, tmp_path):
    # Ten connections for 150 waiting clients: before, MaxConnectionsError and 500s.
    front = Service(
        dict(production.env, REDIS_MAX_CONNECTIONS="10", **LONG_DEADLINE), tmp_path / "front.log"
    )
    try:
        customer = production.customer(monthly=AMPLE, per_minute=AMPLE, per_hour=AMPLE, per_day=AMPLE)
        statuses = fire_at_once(front.url, customer.headers, 150)
    finally:
        front.stop()
    assert statuses.count(200) == 150, {s: statuses.count(s) for s in set(statuses)}
    assert "MaxConnectionsError" not in front.log()

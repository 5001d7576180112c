"""Hostile input against the running service: a clear 400, never a 500, never a charge.

Both modes: the embedded one on SQLite, the production one on PostgreSQL
(which refuses NUL in text where SQLite stores it).
"""

from __future__ import annotations

import pytest

from tests.conftest import Stack

CATEGORIZE = "/api/v1/products/categorize"
DEEP = 5_000

HOSTILE_BODIES = {
    "deep nesting": (
        b'{"product": "knife", "x": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        "nested deeper than",
    ),
    "lone surrogate": (rb'{"product": "knife \ud800"}', "Field 'product'"),
    "NUL": (rb'{"product": "knife \u0000"}', "Field 'product'"),
    "surrogate in instructions": (
        rb'{"product": "knife", "customInstructionsForAi": "\udc00"}',
        "Field 'customInstructionsForAi'",
    ),
}


@pytest.fixture(params=["embedded", "production"])
def stack(request) -> Stack:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("name", HOSTILE_BODIES)
def test_hostile_bodies_are_a_400_naming_the_problem_and_cost_nothing(stack: Stack, name):
    body, expected = HOSTILE_BODIES[name]
    customer = stack.customer(monthly=5)
    with stack.client() as client:
        response = client.post(
            CATEGORIZE, content=body, headers={**customer.headers, "Content-Type": "application/json"}
        )
    assert response.status_code == 400, response.text
    assert expected in response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert stack.balance(customer).total == 5

"""The HTTP contract, against `taxonomist serve` in its embedded mode."""

from __future__ import annotations

import re

import httpx
import pytest

from api.errors import (
    BAD_JSON,
    INSUFFICIENT_CREDITS,
    RATE_LIMITED,
    TOO_LARGE,
    UNAUTHORIZED,
)
from shared.taxonomy.files import load_taxonomy
from tests.conftest import TAXONOMY_DIR

ENDPOINT = "/api/v1/products/categorize"
RESPONSE_FIELDS = {
    "success",
    "categoryFound",
    "categoryId",
    "categoryPath",
    "categoryLine",
    "categoryTags",
    "confidenceLevel",
}
NO_CATEGORY = {
    "success": True,
    "categoryFound": False,
    "categoryId": None,
    "categoryPath": None,
    "categoryLine": None,
    "categoryTags": [],
    "confidenceLevel": "None",
}
GIBBERISH = "zzqx vvkw ppqr"
PILLOW = "Wooded River Mountain Storm Pillow 12x18, 100% polyester throw pillow"


@pytest.fixture(scope="module")
def taxonomies():
    return {name: load_taxonomy(TAXONOMY_DIR, name) for name in ("Google", "Shopify")}


def assert_plain(response: httpx.Response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == message


def post(stack, customer, body=None, **kwargs) -> httpx.Response:
    with stack.client() as client:
        headers = customer.headers if customer else {}
        return client.post(ENDPOINT, json=body, headers=headers, **kwargs)


@pytest.mark.parametrize("taxonomy, id_pattern", [("Google", r"\d+"), ("Shopify", r"[a-z]{2}(-\d+)*")])
def test_found_category_has_exactly_the_contract_fields(embedded, taxonomies, taxonomy, id_pattern):
    customer = embedded.customer()
    response = post(
        embedded, customer, {"product": PILLOW, "taxonomy": taxonomy, "fallbackToBestGuess": True}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == RESPONSE_FIELDS
    assert body["success"] is True and body["categoryFound"] is True
    assert body["confidenceLevel"] in {"AI", "RelevantCategory"}
    assert re.fullmatch(id_pattern, body["categoryId"])
    category = taxonomies[taxonomy].get(body["categoryId"])
    assert category is not None and body["categoryPath"] == category.path
    assert body["categoryLine"] == f"{body['categoryId']} - {body['categoryPath']}"
    assert body["categoryTags"] == body["categoryPath"].split(" > ")


def test_declined_classification_is_the_no_category_shape_and_costs_a_credit(embedded):
    customer = embedded.customer(monthly=5)
    response = post(embedded, customer, {"product": GIBBERISH})
    assert response.status_code == 200
    assert response.json() == NO_CATEGORY
    assert embedded.balance(customer).total == 4


@pytest.mark.parametrize("taxonomy", ["Google", "Shopify"])
def test_leafs_only_answers_a_leaf(embedded, taxonomies, taxonomy):
    customer = embedded.customer()
    body = post(
        embedded,
        customer,
        {"product": "Kitchen", "taxonomy": taxonomy, "leafsOnly": True, "fallbackToBestGuess": True},
    ).json()
    assert body["categoryFound"] is True
    assert taxonomies[taxonomy].get(body["categoryId"]).is_leaf


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": ""},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer txn_short"},
        {"Authorization": "Bearer txn_" + "A" * 43},
        {"Authorization": "txn_" + "A" * 43},
    ],
)
def test_missing_malformed_or_unknown_keys_get_401(embedded, headers):
    with embedded.client() as client:
        response = client.post(ENDPOINT, json={"product": "mug"}, headers=headers)
    assert_plain(response, 401, UNAUTHORIZED)


def test_401_comes_before_every_other_check(embedded):
    with embedded.client() as client:
        response = client.post(ENDPOINT, content=b"{" * 100_000)
    assert_plain(response, 401, UNAUTHORIZED)


def test_body_over_the_limit_by_content_length_is_413_and_free(embedded):
    customer = embedded.customer(monthly=3)
    response = post(embedded, customer, {"product": "x" * 20_000})
    assert_plain(response, 413, TOO_LARGE)
    assert embedded.balance(customer).total == 3


def test_streamed_body_over_the_limit_is_413(embedded):
    customer = embedded.customer()

    def chunks():
        for _ in range(64):
            yield b"x" * 1024

    with embedded.client() as client:
        response = client.post(ENDPOINT, content=chunks(), headers=customer.headers)
    assert "content-length" not in response.request.headers
    assert_plain(response, 413, TOO_LARGE)


def test_413_comes_before_json_validation(embedded):
    customer = embedded.customer()
    with embedded.client() as client:
        response = client.post(ENDPOINT, content=b"{" * 20_000, headers=customer.headers)
    assert_plain(response, 413, TOO_LARGE)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", BAD_JSON),
        (b'{"taxonomy": "Google"}', "Field 'product' is required."),
        (b'{"product": "mug", "leafsOnly": "true"}', "Field 'leafsOnly' must be a boolean (true or false)."),
        (b'{"product": "mug", "taxonomy": "google"}', "Field 'taxonomy' must be \"Google\" or \"Shopify\"."),
    ],
)
def test_invalid_bodies_are_400_and_free(embedded, content, message):
    customer = embedded.customer(monthly=2)
    with embedded.client() as client:
        response = client.post(ENDPOINT, content=content, headers=customer.headers)
    assert_plain(response, 400, message)
    assert embedded.balance(customer).total == 2


def test_400_comes_before_credits(embedded):
    customer = embedded.customer(monthly=0)
    with embedded.client() as client:
        response = client.post(ENDPOINT, content=b"[", headers=customer.headers)
    assert_plain(response, 400, BAD_JSON)


def test_no_credits_is_403(embedded):
    customer = embedded.customer(monthly=0)
    assert_plain(post(embedded, customer, {"product": "mug"}), 403, INSUFFICIENT_CREDITS)


def test_monthly_credits_are_spent_before_top_up(embedded):
    customer = embedded.customer(monthly=1, topup=2)
    for expected_monthly, expected_topup in [(0, 2), (0, 1), (0, 0)]:
        assert post(embedded, customer, {"product": PILLOW}).status_code == 200
        balance = embedded.balance(customer)
        assert (balance.monthly, balance.topup) == (expected_monthly, expected_topup)
    assert_plain(post(embedded, customer, {"product": PILLOW}), 403, INSUFFICIENT_CREDITS)


def test_rate_limit_is_429_with_retry_after_and_free(embedded):
    customer = embedded.customer(monthly=10, per_minute=2)
    assert [post(embedded, customer, {"product": PILLOW}).status_code for _ in range(2)] == [200, 200]
    response = post(embedded, customer, {"product": PILLOW})
    assert_plain(response, 429, RATE_LIMITED)
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit() and 1 <= int(retry_after) <= 60
    assert embedded.balance(customer).total == 8


def test_429_comes_before_size_and_validation(embedded):
    customer = embedded.customer(per_minute=1)
    assert post(embedded, customer, {"product": PILLOW}).status_code == 200
    with embedded.client() as client:
        response = client.post(ENDPOINT, content=b"{" * 20_000, headers=customer.headers)
    assert_plain(response, 429, RATE_LIMITED)


def test_unknown_route_and_method_are_not_500(embedded):
    with embedded.client() as client:
        assert client.get(ENDPOINT).status_code == 405
        assert client.post("/api/v2/products/categorize").status_code == 404


def test_health_and_readiness(embedded):
    with embedded.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["checks"] == {"database": True, "schema": True, "broker": True, "taxonomies": True}
    assert body["taxonomyVersions"] == {"Google": "2021-09-21", "Shopify": "2025-08-unstable"}

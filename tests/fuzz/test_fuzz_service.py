"""Property-based fuzzing of the running service: hostile input never breaks it.

Random bodies, headers, query strings, path ids, uploads and dashboard forms,
sent to `taxonomist serve` for real: the synchronous endpoint and the
dashboard in the embedded mode (SQLite), the jobs API in the production mode
(PostgreSQL, which refuses text SQLite stores). For every answer:

- the status is one the contract (or the jobs API, or the dashboard) allows,
  and never 500;
- no body carries a Python traceback;
- the account's credits change only on a 200 (one credit), and a job
  submission by an account without credits never holds any.

Bounded so that CI stays fast: MAX_EXAMPLES per test (about 320 requests in
all), no per-example deadline (the first requests load the indexes).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import Customer, Stack
from tests.dashboard.test_forms import csrf_token

CATEGORIZE = "/api/v1/products/categorize"
JOBS = "/api/v1/jobs"
LIMITS = {"per_minute": 100_000, "per_hour": 100_000, "per_day": 100_000}
CREDITS = 10_000

CATEGORIZE_STATUSES = {200, 400, 401, 403, 413, 429}
SUBMIT_STATUSES = {400, 401, 403, 413, 429}  # never 202: the submitting account has no credits
READ_STATUSES = {200, 400, 404, 429}
FORM_STATUSES = {303, 400, 403, 413, 415, 429}

FUZZ = settings(
    max_examples=80,
    deadline=None,
    # No "explain" phase: it re-runs a failure hundreds of times against the server.
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Every code point, lone surrogates and NUL included.
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=12,
)
field_values = json_values | st.sampled_from(["Google", "Shopify", "", " ", "Amazon"])
request_objects = st.fixed_dictionaries(
    {},
    optional={
        "product": any_text | field_values | st.sampled_from(["Stainless steel chef knife", "Wool scarf"]),
        "taxonomy": field_values,
        "customInstructionsForAi": field_values,
        "leafsOnly": field_values,
        "fallbackToBestGuess": field_values,
    },
)


def nested(depth: int) -> bytes:
    return b'{"product": "knife", "x": ' + b"[" * depth + b"]" * depth + b"}"


bodies = st.one_of(
    request_objects.map(lambda value: json.dumps(value).encode()),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=200),
    st.integers(1, 8_000).map(nested),
    st.integers(16_000, 17_000).map(lambda size: b'{"product": "' + b"k" * size + b'"}'),
)
# What HTTP lets a header carry: no control characters.
header_text = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=250)
VALID_KEY = "the payer's key"
authorizations = st.one_of(
    st.just(VALID_KEY),
    st.none(),
    header_text,
    header_text.map(lambda text: "Bearer txn_" + text),
)
content_types = st.sampled_from(
    ["application/json", "text/plain", "", "application/json; charset=utf-16", "multipart/form-data"]
)


@pytest.fixture(scope="module")
def payer(embedded: Stack) -> Customer:
    return embedded.customer(monthly=CREDITS, **LIMITS)


@pytest.fixture(scope="module")
def penniless(production: Stack) -> Customer:
    return production.customer(monthly=0, **LIMITS)


def check(response: httpx.Response, allowed: set[int]) -> None:
    assert response.status_code in allowed, (response.status_code, response.text[:500])
    assert "Traceback" not in response.text


@FUZZ
@given(body=bodies, content_type=content_types, authorization=authorizations)
def test_categorize(embedded: Stack, payer: Customer, body, content_type, authorization):
    headers: dict = {"Content-Type": content_type}
    if authorization == VALID_KEY:
        headers.update(payer.headers)
    elif authorization is not None:
        headers["Authorization"] = authorization.encode("utf-8")
    before = embedded.balance(payer).total
    with embedded.client() as client:
        response = client.post(CATEGORIZE, content=body, headers=headers)
    check(response, CATEGORIZE_STATUSES)
    assert embedded.balance(payer).total == before - (response.status_code == 200)


csv_cells = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
csv_bodies = st.lists(st.lists(csv_cells, min_size=1, max_size=4), max_size=6).map(
    lambda rows: "\n".join(",".join(row) for row in [["id", "product"], *rows])
)
jsonl_bodies = st.lists(request_objects | json_values, max_size=5).map(
    lambda items: "\n".join(json.dumps(item) for item in items)
)
job_bodies = st.one_of(
    csv_bodies.map(str.encode),
    jsonl_bodies.map(str.encode),
    st.lists(st.fixed_dictionaries({"id": field_values}, optional={"product": field_values}), max_size=4).map(
        lambda items: json.dumps({"items": items}).encode()
    ),
    st.binary(max_size=200),
    st.integers(1, 8_000).map(nested),
)
job_types = st.sampled_from(["text/csv", "application/x-ndjson", "application/json", "text/plain", ""])
query_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
job_options = st.dictionaries(
    st.sampled_from(["taxonomy", "customInstructionsForAi", "leafsOnly", "fallbackToBestGuess"]),
    query_text,
    max_size=3,
)


@FUZZ
@given(body=job_bodies, content_type=job_types, options=job_options, key=st.none() | header_text)
def test_job_submissions(production: Stack, penniless: Customer, body, content_type, options, key):
    headers: dict = {"Content-Type": content_type, **penniless.headers}
    if key is not None:
        headers["Idempotency-Key"] = key.encode("utf-8")  # raw bytes on the wire
    with production.client() as client:
        response = client.post(JOBS, content=body, params=options, headers=headers)
    check(response, SUBMIT_STATUSES)
    assert production.balance(penniless).total == 0


# Sent percent-encoded, as a client must: the server decodes them to anything.
path_ids = st.one_of(
    query_text.filter(lambda text: text not in ("", ".", "..")).map(lambda text: quote(text, safe="")),
    st.sampled_from(["job_" + "0" * 32, "%00", "%ff", "job_%00"]),
)
query_values = st.one_of(query_text, st.integers(-(10**30), 10**30).map(str), st.sampled_from(["\u00b2", "%00"]))


@FUZZ
@given(
    job_id=path_ids,
    suffix=st.sampled_from(["", "/results"]),
    params=st.dictionaries(st.sampled_from(["limit", "cursor", "format"]), query_values, max_size=3),
)
def test_job_reads(production: Stack, penniless: Customer, job_id, suffix, params):
    with production.client() as client:
        listed = client.get(JOBS, params=params, headers=penniless.headers)
        one = client.get(f"{JOBS}/{job_id}{suffix}", params=params, headers=penniless.headers)
    check(listed, READ_STATUSES)
    check(one, READ_STATUSES)


form_fields = st.dictionaries(
    st.sampled_from(["email", "password", "csrf_token", "name", "product"]) | query_text,
    query_text | st.sampled_from(["someone@example.test", "correct horse battery staple"]),
    max_size=4,
)
form_types = st.sampled_from(
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", ""]
)


@FUZZ
@given(
    path=st.sampled_from(["/dashboard/signin", "/dashboard/signup", "/dashboard/signout", "/dashboard/keys"]),
    fields=form_fields,
    keep_token=st.booleans(),
    raw=st.none() | st.binary(max_size=200),
    content_type=form_types,
)
def test_dashboard_forms(embedded: Stack, path, fields, keep_token, raw, content_type):
    with embedded.client() as client:
        token = csrf_token(client, "/dashboard/signin")
        if keep_token:
            fields = {**fields, "csrf_token": token}
        if raw is None:
            response = client.post(path, data=fields)
        else:
            response = client.post(path, content=raw, headers={"Content-Type": content_type})
    check(response, FORM_STATUSES)

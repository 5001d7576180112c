"""The fast tier: the Starlette app in this process (TestClient), no worker, no server.

Everything the routes decide before any work is sent: the contract's order of
checks (401, 429, 413, 400, 403) on both endpoints, and job ownership.
The real-server tier (test_contract.py, tests/jobs) covers the work itself.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from api.app import build_context, create_app
from api.errors import BAD_JSON, INSUFFICIENT_CREDITS, RATE_LIMITED, TOO_LARGE, UNAUTHORIZED
from shared.db.migrate import open_database
from shared.settings import Settings
from tests.conftest import TAXONOMY_DIR, make_customer
from worker.celery_app import make_celery

ENDPOINT = "/api/v1/products/categorize"
JOBS = "/api/v1/jobs"
MAX_BODY_BYTES = 200
TOO_BIG = b'{"product": "' + b"x" * MAX_BODY_BYTES + b'"}'
VALID = {"product": "chef knife"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    database_url = f"sqlite:///{tmp_path_factory.mktemp('front') / 'front.sqlite3'}"
    open_database(database_url).dispose()
    settings = Settings(
        database_url=database_url,
        taxonomy_dir=TAXONOMY_DIR,
        max_body_bytes=MAX_BODY_BYTES,
        job_max_body_bytes=MAX_BODY_BYTES,
    )
    with TestClient(create_app(build_context(settings, make_celery(settings)))) as client:
        yield client, database_url


def test_no_key_is_401_whatever_the_body(stack):
    client, _ = stack
    response = client.post(ENDPOINT, content=TOO_BIG)
    assert (response.status_code, response.text) == (401, UNAUTHORIZED)
    assert client.post(JOBS, content=b"{").status_code == 401


def test_the_rate_limit_comes_before_the_size(stack):
    client, database_url = stack
    customer = make_customer(database_url, per_minute=1)
    assert client.post(ENDPOINT, content=TOO_BIG, headers=customer.headers).status_code == 413
    limited = client.post(ENDPOINT, content=TOO_BIG, headers=customer.headers)
    assert (limited.status_code, limited.text) == (429, RATE_LIMITED)
    assert int(limited.headers["retry-after"]) >= 1


def test_the_size_comes_before_the_json(stack):
    client, database_url = stack
    customer = make_customer(database_url)
    response = client.post(ENDPOINT, content=b"{" * (MAX_BODY_BYTES + 1), headers=customer.headers)
    assert (response.status_code, response.text) == (413, TOO_LARGE)


def test_the_json_comes_before_the_credits(stack):
    client, database_url = stack
    customer = make_customer(database_url, monthly=0)
    bad = client.post(ENDPOINT, content=b"{", headers=customer.headers)
    assert (bad.status_code, bad.text) == (400, BAD_JSON)
    missing = client.post(ENDPOINT, json={"taxonomy": "Google"}, headers=customer.headers)
    assert missing.status_code == 400
    broke = client.post(ENDPOINT, json=VALID, headers=customer.headers)
    assert (broke.status_code, broke.text) == (403, INSUFFICIENT_CREDITS)


def test_a_job_is_checked_whole_before_its_credits(stack):
    client, database_url = stack
    customer = make_customer(database_url, monthly=1)
    lines = b'{"id": "a", "product": "knife"}\n{"id": "b", "product": "fork"}\n'
    headers = {**customer.headers, "content-type": "application/x-ndjson"}
    assert client.post(JOBS, content=b'{"id": "a"}\n', headers=headers).status_code == 400
    assert client.post(JOBS, content=TOO_BIG, headers=headers).status_code == 413
    broke = client.post(JOBS, content=lines, headers=headers)
    assert (broke.status_code, broke.text) == (403, INSUFFICIENT_CREDITS)


def test_another_accounts_job_does_not_exist(stack):
    client, database_url = stack
    owner, other = make_customer(database_url), make_customer(database_url)
    headers = {**owner.headers, "content-type": "application/x-ndjson"}
    # The embedded in-memory broker takes the chunks; no worker runs them here.
    job = client.post(JOBS, content=b'{"id": "a", "product": "knife"}\n', headers=headers).json()
    assert client.get(f"{JOBS}/{job['id']}", headers=owner.headers).json()["id"] == job["id"]
    assert client.get(f"{JOBS}/{job['id']}", headers=other.headers).status_code == 404
    assert client.post(f"{JOBS}/{job['id']}/cancel", headers=other.headers).status_code == 404

"""`taxonomist accounts` and `taxonomist keys`, run while `serve` runs on the same SQLite file."""

from __future__ import annotations

import httpx

from tests.conftest import Stack
from tests.servers import run_cli

ENDPOINT = "/api/v1/products/categorize"


def cli(stack: Stack, *args: str):
    return run_cli(list(args), stack.env)


def test_account_and_key_lifecycle_through_the_cli(embedded: Stack):
    email = "cli-owner@example.test"
    created = cli(embedded, "accounts", "create", email, "--monthly-credits", "3", "--per-minute", "50")
    assert created.returncode == 0, created.stderr
    key = cli(embedded, "keys", "create", email, "--name", "production")
    assert key.returncode == 0, key.stderr
    # The key, alone, on standard output: scripts capture it as it is.
    value = key.stdout.strip()
    assert key.stdout == value + "\n" and value.startswith("txn_")

    headers = {"Authorization": f"Bearer {value}"}
    response = httpx.post(embedded.url + ENDPOINT, json={"product": "mug"}, headers=headers, timeout=60)
    assert response.status_code == 200

    listed = cli(embedded, "keys", "list", email)
    assert "production" in listed.stdout and value not in listed.stdout
    key_id = listed.stdout.split("\t")[0]
    deleted = cli(embedded, "keys", "delete", email, key_id)
    assert deleted.returncode == 0, deleted.stderr
    response = httpx.post(embedded.url + ENDPOINT, json={"product": "mug"}, headers=headers, timeout=60)
    assert response.status_code == 401


def test_the_fourth_key_is_refused_with_the_support_contact(embedded: Stack):
    email = "cli-keys@example.test"
    assert cli(embedded, "accounts", "create", email).returncode == 0
    for n in range(3):
        assert cli(embedded, "keys", "create", email, "--name", f"k{n}").returncode == 0
    refused = cli(embedded, "keys", "create", email, "--name", "k4")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "help@example.test" in refused.stderr and "3" in refused.stderr


def test_operator_mistakes_are_clear_errors(embedded: Stack):
    missing = cli(embedded, "keys", "create", "nobody@example.test", "--name", "x")
    assert missing.returncode == 1 and "nobody@example.test" in missing.stderr
    assert "Traceback" not in missing.stderr
    email = "cli-twice@example.test"
    assert cli(embedded, "accounts", "create", email).returncode == 0
    again = cli(embedded, "accounts", "create", email)
    assert again.returncode == 1 and "exists" in again.stderr
    negative = cli(embedded, "accounts", "create", "neg@example.test", "--monthly-credits", "-1")
    assert negative.returncode == 1 and "--monthly-credits" in negative.stderr

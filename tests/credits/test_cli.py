"""`taxonomist credits`."""

from __future__ import annotations

import json
from datetime import date, timedelta

from tests.conftest import Stack
from tests.servers import run_cli


def test_topup_and_show_json(embedded: Stack):
    email = "cli-credits@example.test"
    args = ["accounts", "create", email, "--monthly-credits", "7", "--topup-credits", "2"]
    assert run_cli(args, embedded.env).returncode == 0
    assert run_cli(["credits", "topup", email, "5"], embedded.env).returncode == 0
    shown = run_cli(["credits", "show", email, "--json"], embedded.env)
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    balance = json.loads(shown.stdout)
    assert set(balance) == {"monthly", "monthlyAllowance", "topup", "total", "renewsAt"}
    assert (balance["monthly"], balance["monthlyAllowance"], balance["topup"], balance["total"]) == (7, 7, 7, 14)
    renews = date.fromisoformat(balance["renewsAt"])
    assert date.today() + timedelta(days=27) <= renews <= date.today() + timedelta(days=32)


def test_a_topup_must_be_positive(embedded: Stack):
    email = "cli-topup@example.test"
    assert run_cli(["accounts", "create", email], embedded.env).returncode == 0
    refused = run_cli(["credits", "topup", email, "0"], embedded.env)
    assert refused.returncode == 1 and "positive" in refused.stderr

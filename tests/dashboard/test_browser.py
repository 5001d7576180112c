"""The dashboard in a real browser against the real service: the issue's user journeys."""

from __future__ import annotations

import csv
import json

import httpx
from playwright.sync_api import expect

from shared.accounts import service as accounts
from shared.credits import service as credits
from shared.db.session import Database
from shared.settings import Settings
from tests.conftest import Stack
from tests.api.test_contract import RESPONSE_FIELDS as CONTRACT_FIELDS
from tests.dashboard.browser import Dashboard

ENDPOINT = "/api/v1/products/categorize"
HOSTILE = "<script>window.pwned = true</script>"
# Large enough that most of it is still queued when Cancel is pressed.
BIG_JOB = 3_000
JOB_TIMEOUT_MS = 120_000
PAGES = ["/dashboard/", "/dashboard/keys", "/dashboard/playground", "/dashboard/jobs", "/dashboard/billing"]


def classify_with(stack: Stack, key: str) -> httpx.Response:
    return httpx.post(
        stack.url + ENDPOINT,
        json={"product": "Stainless steel chef's knife, 20 cm blade"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )


def test_a_key_made_on_the_page_works_until_it_is_deleted(dashboard: Dashboard, embedded: Stack):
    dashboard.sign_up()
    assert dashboard.total_credits() == embedded_allowance(embedded)
    key = dashboard.create_key("production")
    assert "shown only this once" in dashboard.page.locator(".new-key").inner_text()

    response = classify_with(embedded, key)
    assert response.status_code == 200
    assert set(response.json()) == CONTRACT_FIELDS

    dashboard.open("/dashboard/keys")
    row = dashboard.page.locator("tr", has_text="production")
    assert key[:12] in row.inner_text() and "never" not in row.inner_text()
    dashboard.delete_key("production")
    assert dashboard.page.locator("tr", has_text="production").count() == 0
    assert classify_with(embedded, key).status_code == 401
    assert dashboard.total_credits() == embedded_allowance(embedded) - 1


def test_the_playground_classifies_for_a_credit_and_shows_everything(dashboard: Dashboard):
    dashboard.sign_up()
    before = dashboard.total_credits()
    dashboard.classify(f"{HOSTILE} Men's trail running shoes, waterproof", fallback=True)
    page = dashboard.page

    body = json.loads(page.locator("#response-json").inner_text())
    assert set(body) == CONTRACT_FIELDS
    card_classes = page.locator("#result").get_attribute("class")
    expected_mark = {"AI": "green", "RelevantCategory": "yellow", "None": "black"}
    assert expected_mark[body["confidenceLevel"]] in card_classes
    assert page.locator("#candidates tbody tr").count() == 15
    curl = page.locator("#curl").inner_text()
    assert ENDPOINT in curl and '"fallbackToBestGuess": true' in curl
    # The hostile text is shown as text, and never ran.
    assert HOSTILE in page.locator("#product").input_value()
    assert page.evaluate("window.pwned") is None

    assert dashboard.total_credits() == before - 1
    legend = page.locator(".legend").inner_text()
    assert "Found (1)" in legend or "Not found (1)" in legend


def test_the_fourth_key_is_refused_with_the_support_address(dashboard: Dashboard, embedded: Stack):
    dashboard.sign_up()
    for name in ("production", "staging", "development"):
        dashboard.create_key(name)
    dashboard.open("/dashboard/keys")
    limit = dashboard.page.locator("#key-limit").inner_text()
    assert "limit of 3 active keys" in limit and embedded.env["SUPPORT_EMAIL"] in limit
    assert dashboard.page.locator("#name").count() == 0


def test_a_bulk_job_uploaded_on_the_page_runs_and_its_results_download(
    dashboard: Dashboard, tmp_path
):
    dashboard.sign_up()
    before = dashboard.total_credits()
    products = tmp_path / "products.csv"
    products.write_text("id,product,sku\n1,Ceramic coffee mug 350 ml,A1\n2,Leather wallet,B2\n")
    job_id = dashboard.upload_job(products, fallback=True)
    # The page reloads itself while the job runs.
    # A locator, not a JavaScript predicate: the pages' CSP forbids eval.
    expect(dashboard.page.locator(f'tr[data-job="{job_id}"] .status')).to_have_text(
        "completed", timeout=JOB_TIMEOUT_MS
    )
    with dashboard.page.expect_download() as download:
        dashboard.page.locator(f'tr[data-job="{job_id}"]').get_by_role("link", name="CSV").click()
    rows = list(csv.DictReader(open(download.value.path(), encoding="utf-8")))
    assert [(row["id"], row["sku"], row["success"]) for row in rows] == [
        ("1", "A1", "true"),
        ("2", "B2", "true"),
    ]
    assert dashboard.total_credits() == before - 2


def test_cancelling_a_bulk_job_gives_back_the_credits_not_used(
    dashboard: Dashboard, embedded: Stack, tmp_path
):
    email = dashboard.sign_up()
    top_up(embedded, email, BIG_JOB)
    before = dashboard.total_credits()
    products = tmp_path / "products.jsonl"
    products.write_text(
        "".join(json.dumps({"id": str(n), "product": f"Ceramic mug model {n}"}) + "\n" for n in range(BIG_JOB))
    )
    job_id = dashboard.upload_job(products)
    dashboard.page.locator(f'tr[data-job="{job_id}"]').get_by_role("button", name="Cancel").click()
    # A locator, not a JavaScript predicate: the pages' CSP forbids eval.
    expect(dashboard.page.locator(f'tr[data-job="{job_id}"] .status')).to_have_text(
        "cancelled", timeout=JOB_TIMEOUT_MS
    )
    spent = before - dashboard.total_credits()
    assert 0 <= spent < BIG_JOB


def test_sign_out_then_sign_in(dashboard: Dashboard):
    email = dashboard.sign_up()
    dashboard.sign_out()
    dashboard.open("/dashboard/keys")
    assert dashboard.page.url.endswith("/dashboard/signin")
    dashboard.sign_in(email, "not the password")
    assert "wrong" in dashboard.page.locator(".error").inner_text()
    dashboard.sign_in(email)
    dashboard.page.wait_for_selector("#total-credits")


def test_forms_work_without_javascript(no_javascript: Dashboard, embedded: Stack):
    no_javascript.sign_up()
    key = no_javascript.create_key("no-js")
    assert classify_with(embedded, key).status_code == 200


def test_pages_fit_a_phone_screen(phone: Dashboard):
    phone.sign_up()
    phone.create_key("a key with a rather long name for a phone")
    phone.classify("Men's trail running shoes, waterproof", fallback=True)
    for path in PAGES:
        phone.open(path)
        overflow = phone.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px on a phone"


def top_up(stack: Stack, email: str, amount: int) -> None:
    database = Database(stack.database_url)
    try:
        with database.session() as session:
            credits.top_up(session, accounts.get_account(session, email).id, amount)
    finally:
        database.dispose()


def embedded_allowance(stack: Stack) -> int:
    return int(stack.env.get("DEFAULT_MONTHLY_CREDITS", Settings.default_monthly_credits))

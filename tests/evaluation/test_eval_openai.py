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

import json
from pathlib import Path

from cli.main import main
from shared.evaluation.metrics import Outcome, is_path_consistent, summarize
from shared.taxonomy.models import Category

TAXONOMIES = Path(__file__).resolve().parents[1] / "taxonomy" / "data"
KEYS = {
    "count", "recall@1", "recall@5", "recall@15", "accuracy", "coverage", "accuracyFound",
    "pathConsistentAccuracy", "topLevelAccuracy", "p50Ms", "p95Ms", "taxonomyVersion",
    "decided", "precisionDecided", "topLevelPrecisionDecided",
    "declined", "fallback", "invalidAnswers", "truncatedAnswers", "failed",
    "promptTokensPerItem", "completionTokensPerItem",
}
ITEMS = [
    {"product": "Plush dog bed, large\nwashable cover", "taxonomy": "Google", "categoryId": "4"},
    {"product": "Ceramic vase", "taxonomy": "Google", "categoryId": "13"},
    {"product": "Road bicycle helmet", "taxonomy": "Shopify", "categoryId": "sg-1-2"},
]


def write_items(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in ITEMS) + "\n")
    return path


def run_eval(tmp_path, monkeypatch, capsys, *args):
    monkeypatch.setenv("TAXONOMY_DIR", str(TAXONOMIES))
    monkeypatch.setenv("TAXONOMIST_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["eval", str(write_items(tmp_path)), *args])
    return code, capsys.readouterr()


def test_json_last_line_has_exactly_the_keys(tmp_path, monkeypatch, capsys):
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--taxonomy", "Google", "--json")
    assert code == 0
    summary = json.loads(out.out.strip().splitlines()[-1])
    assert set(summary) == KEYS
    assert summary["count"] == 2
    assert summary["taxonomyVersion"] == "2030-01-02"
    assert summary["coverage"] == 1.0  # fallback is on by default


def test_one_report_per_taxonomy_in_the_file(tmp_path, monkeypatch, capsys):
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--json")
    lines = out.out.strip().splitlines()
    assert code == 0
    assert [json.loads(line)["count"] for line in lines[-2:]] == [2, 1]
    assert "Google" in out.out and "Shopify" in out.out


def test_limit_and_no_fallback(tmp_path, monkeypatch, capsys):
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--limit", "1", "--no-fallback", "--json")
    summary = json.loads(out.out.strip().splitlines()[-1])
    assert code == 0 and summary["count"] == 1
    assert "fallbackToBestGuess off" in out.out


def test_details_file_has_one_line_per_item(tmp_path, monkeypatch, capsys):
    details = tmp_path / "details.jsonl"
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--details", str(details), "--json")
    assert code == 0
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    assert [line["label"]["id"] for line in lines] == [item["categoryId"] for item in ITEMS]
    for line in lines:
        # Fallback is on: every item is answered, by the selector or by the fallback.
        assert line["answer"] is not None and line["decided"] != line["fallback"]
        assert line["correct"] == (line["answer"]["id"] == line["label"]["id"])
        assert line["candidates"] and set(line["candidates"][0]) == {"id", "path", "score", "support", "votes"}
        rank = line["labelRank"]
        if rank is not None and rank <= len(line["candidates"]):
            assert line["candidates"][rank - 1]["id"] == line["label"]["id"]
    summaries = [json.loads(line) for line in out.out.strip().splitlines()[-2:]]
    assert sum(s["decided"] * s["count"] for s in summaries) == sum(line["decided"] for line in lines)


def test_details_file_that_cannot_be_written_is_named(tmp_path, monkeypatch, capsys):
    code, out = run_eval(tmp_path, monkeypatch, capsys, "--details", str(tmp_path / "no" / "such" / "f"))
    assert code == 2 and "Cannot write" in out.err


def test_missing_taxonomy_dir_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TAXONOMY_DIR", raising=False)
    code = main(["eval", str(write_items(tmp_path))])
    assert code == 2
    assert "TAXONOMY_DIR" in capsys.readouterr().err


def test_summary_figures():
    label = Category("b", "B", "A > B", "a", 1, True)
    parent = Category("a", "A", "A", None, 0, False)
    other = Category("c", "C", "C", None, 0, True)
    outcomes = [
        Outcome(label, label, ["b", "a"], 1.0, decided=True),
        Outcome(label, parent, ["a", "b"], 2.0, decided=True),
        Outcome(label, other, ["c"], 3.0, invalid_answer=True, prompt_tokens=40),
        Outcome(label, None, [], 4.0, failed=True, truncated_answer=True),
    ]
    summary = summarize(outcomes, "v1")
    assert summary["recall@1"] == 0.25 and summary["recall@5"] == 0.5
    assert summary["accuracy"] == 0.25 and summary["coverage"] == 0.75
    assert summary["accuracyFound"] == round(1 / 3, 4)
    assert summary["pathConsistentAccuracy"] == 0.5
    assert summary["topLevelAccuracy"] == 0.5
    assert summary["decided"] == 0.5
    assert summary["precisionDecided"] == 0.5 and summary["topLevelPrecisionDecided"] == 1.0
    assert summary["p50Ms"] == 2.5
    assert (summary["declined"], summary["fallback"], summary["failed"]) == (0, 1, 1)
    assert (summary["invalidAnswers"], summary["truncatedAnswers"]) == (1, 1)
    assert summary["promptTokensPerItem"] == 10.0
    assert is_path_consistent(parent, label) and not is_path_consistent(other, label)

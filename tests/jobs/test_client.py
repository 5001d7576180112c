"""The `taxonomist jobs` client and commands against a real HTTP server on loopback that answers as scripted."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cli.main import main
from shared.jobs.client import MAX_ATTEMPTS, ClientError, JobsClient

JOB = {
    "id": "job-1",
    "status": "completed",
    "counts": {"total": 2, "done": 2, "found": 1, "notFound": 1, "failed": 0, "cancelled": 0},
    "credits": {"held": 2, "consumed": 2, "refunded": 0},
}
# An immediate retry: the client waits what the service asks for.
NO_WAIT = {"Retry-After": "0"}


class ScriptedService:
    """Answers each request with the next scripted (status, headers, body); the last one repeats."""

    def __init__(self, *answers: tuple[int, dict[str, str], bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                service.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": self.rfile.read(length)}
                )
                status, headers, body = (
                    service.answers.pop(0) if len(service.answers) > 1 else service.answers[0]
                )
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def ok(payload: dict) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def refusal(status: int, text: str, headers: dict[str, str] | None = None):
    return status, {"Content-Type": "text/plain", **(headers or {})}, text.encode()


@pytest.fixture
def scripted():
    services: list[ScriptedService] = []

    def start(*answers) -> ScriptedService:
        services.append(ScriptedService(*answers))
        return services[-1]

    yield start
    for service in services:
        service.close()


def test_a_busy_service_is_asked_again_until_it_answers(scripted):
    service = scripted(
        refusal(503, "busy", NO_WAIT), refusal(429, "Rate limit exceeded.", NO_WAIT), ok(JOB)
    )
    client = JobsClient(service.url, "key")
    try:
        assert client.status("job-1") == JOB
    finally:
        client.close()
    assert len(service.requests) == 3
    assert service.requests[0]["headers"]["Authorization"] == "Bearer key"


def test_retries_end_with_the_last_refusal(scripted):
    service = scripted(refusal(429, "Rate limit exceeded.", NO_WAIT))
    client = JobsClient(service.url, "key")
    try:
        with pytest.raises(ClientError, match="HTTP 429: Rate limit exceeded."):
            client.status("job-1")
    finally:
        client.close()
    assert len(service.requests) == MAX_ATTEMPTS


def test_a_client_error_is_not_retried(scripted):
    service = scripted(refusal(401, "Cannot find account for this API key."), ok(JOB))
    client = JobsClient(service.url, "key")
    try:
        with pytest.raises(ClientError, match="HTTP 401: Cannot find account"):
            client.cancel("job-1")
    finally:
        client.close()
    assert len(service.requests) == 1


def test_a_retried_submission_keeps_its_idempotency_key(scripted, tmp_path: Path):
    service = scripted(refusal(502, "bad gateway", NO_WAIT), ok({**JOB, "status": "queued"}))
    upload = tmp_path / "items.csv"
    upload.write_text("product\nmug\nlamp\n")
    client = JobsClient(service.url, "key")
    try:
        assert client.submit(upload, {"taxonomy": "Google"})["status"] == "queued"
    finally:
        client.close()
    first, second = service.requests
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]
    assert second["body"] == upload.read_bytes()
    assert second["headers"]["Content-Type"] == "text/csv"
    assert second["path"] == "/api/v1/jobs?taxonomy=Google"


def test_results_are_downloaded_after_a_retry(scripted, tmp_path: Path):
    lines = b'{"id": "a", "success": true}\n{"id": "b", "success": true}\n'
    service = scripted(
        refusal(500, "oops", NO_WAIT), (200, {"Content-Type": "application/x-ndjson"}, lines)
    )
    out = tmp_path / "results.jsonl"
    client = JobsClient(service.url, "key")
    try:
        client.download("job-1", out)
    finally:
        client.close()
    assert out.read_bytes() == lines
    assert service.requests[-1]["path"] == "/api/v1/jobs/job-1/results?format=jsonl"


def test_the_status_command_prints_the_job(scripted, capsys):
    service = scripted(ok(JOB))
    assert main(["jobs", "status", "job-1", "--url", service.url, "--key", "key"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("job-1 completed: 2 of 2 done (1 found, 1 not found)")


def test_the_commands_report_a_refusal_and_a_missing_key(scripted, capsys, monkeypatch):
    service = scripted(refusal(404, "Job not found."))
    assert main(["jobs", "cancel", "job-9", "--url", service.url, "--key", "key"]) == 1
    assert "taxonomist jobs: HTTP 404: Job not found." in capsys.readouterr().err
    monkeypatch.delenv("TAXONOMIST_API_KEY", raising=False)
    assert main(["jobs", "status", "job-1", "--url", service.url, "--key", ""]) == 2
    assert "give --key or set TAXONOMIST_API_KEY" in capsys.readouterr().err

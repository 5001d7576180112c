"""A small HTTP client of /api/v1/jobs for the `taxonomist jobs` commands.

It retries (tenacity) on 429, on 5xx and on connection errors, after the
Retry-After the service asked for or else an exponential backoff; a
submission carries an Idempotency-Key, so retrying it never makes a second job.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Callable, TypeVar

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from shared.ai.retry_after import retry_after_seconds

MAX_ATTEMPTS = 8
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
REQUEST_TIMEOUT_SECONDS = 120.0
CONTENT_TYPES = {
    ".csv": "text/csv",
    ".jsonl": "application/x-ndjson",
    ".ndjson": "application/x-ndjson",
    ".json": "application/json",
}
RETRIED_STATUSES = {429, 500, 502, 503, 504}


class ClientError(Exception):
    """The service refused the request; the message is its plain-text answer."""


class _RetryableAnswer(Exception):
    """A 429 or 5xx: worth another attempt, after the wait it asked for if it named one."""

    def __init__(self, message: str, wait_seconds: float | None) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds


Answer = TypeVar("Answer")
_backoff = wait_exponential(multiplier=FIRST_BACKOFF_SECONDS, max=MAX_BACKOFF_SECONDS)


def _wait(retry_state: RetryCallState) -> float:
    assert retry_state.outcome is not None  # tenacity waits after an attempt
    failure = retry_state.outcome.exception()
    if isinstance(failure, _RetryableAnswer) and failure.wait_seconds is not None:
        return failure.wait_seconds
    return _backoff(retry_state)


def content_type_of(path: Path) -> str:
    try:
        return CONTENT_TYPES[path.suffix.lower()]
    except KeyError:
        raise ClientError(f"{path}: use a .csv, .jsonl or .json file.") from None


class JobsClient:
    def __init__(self, url: str, key: str) -> None:
        self._http = httpx.Client(
            base_url=url.rstrip("/"),
            headers={"Authorization": f"Bearer {key}"},
            timeout=REQUEST_TIMEOUT_SECONDS,
        )
        self._retrying = Retrying(
            stop=stop_after_attempt(MAX_ATTEMPTS),
            wait=_wait,
            retry=retry_if_exception_type((httpx.TransportError, _RetryableAnswer)),
            reraise=True,
        )

    def close(self) -> None:
        self._http.close()

    def submit(self, path: Path, options: dict[str, str]) -> dict:
        headers = {"Content-Type": content_type_of(path), "Idempotency-Key": uuid.uuid4().hex}
        body = path.read_bytes()
        return self._call("POST", "/api/v1/jobs", content=body, headers=headers, params=options)

    def status(self, job_id: str) -> dict:
        return self._call("GET", f"/api/v1/jobs/{job_id}")

    def cancel(self, job_id: str) -> dict:
        return self._call("POST", f"/api/v1/jobs/{job_id}/cancel")

    def download(self, job_id: str, out: Path) -> None:
        """Stream the results to `out`: CSV for a .csv file, JSON Lines otherwise."""
        kind = "csv" if out.suffix.lower() == ".csv" else "jsonl"

        def attempt() -> None:
            with self._http.stream(
                "GET", f"/api/v1/jobs/{job_id}/results", params={"format": kind}
            ) as response:
                _check(response, response.read() if response.is_error else b"")
                with open(out, "wb") as file:
                    for chunk in response.iter_bytes():
                        file.write(chunk)

        self._with_retries(attempt)

    def _call(self, method: str, path: str, **kwargs) -> dict:
        def attempt() -> dict:
            response = self._http.request(method, path, **kwargs)
            _check(response, response.content)
            return response.json()

        return self._with_retries(attempt)

    def _with_retries(self, attempt: Callable[[], Answer]) -> Answer:
        try:
            return self._retrying(attempt)
        except _RetryableAnswer as exc:
            # Retries spent: the last answer is the service's refusal.
            raise ClientError(str(exc)) from None


def _check(response: httpx.Response, body: bytes) -> None:
    if not response.is_error:
        return
    message = f"HTTP {response.status_code}: {body.decode(errors='replace').strip()}"
    if response.status_code in RETRIED_STATUSES:
        raise _RetryableAnswer(message, retry_after_seconds(response.headers))
    raise ClientError(message)

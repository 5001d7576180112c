"""A small HTTP client of /api/v1/jobs for the `taxonomist jobs` commands.

It honours Retry-After and backs off exponentially on 429, on 5xx and on
connection errors; a submission carries an Idempotency-Key, so retrying it
never makes a second job.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx

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
        for attempt in range(1, MAX_ATTEMPTS + 1):
            with self._http.stream(
                "GET", f"/api/v1/jobs/{job_id}/results", params={"format": kind}
            ) as response:
                if self._should_retry(response, attempt):
                    continue
                _raise_for(response.read() if response.is_error else b"", response)
                with open(out, "wb") as file:
                    for chunk in response.iter_bytes():
                        file.write(chunk)
                return

    def _call(self, method: str, path: str, **kwargs) -> dict:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if attempt == MAX_ATTEMPTS:
                    raise
                time.sleep(_backoff(attempt))
                continue
            if self._should_retry(response, attempt):
                continue
            _raise_for(response.content, response)
            return response.json()
        raise AssertionError("unreachable: the last attempt returns or raises")

    @staticmethod
    def _should_retry(response: httpx.Response, attempt: int) -> bool:
        if response.status_code not in RETRIED_STATUSES or attempt == MAX_ATTEMPTS:
            return False
        retry_after = response.headers.get("retry-after", "")
        time.sleep(float(retry_after) if retry_after.isdigit() else _backoff(attempt))
        return True


def _raise_for(body: bytes, response: httpx.Response) -> None:
    if response.is_error:
        raise ClientError(f"HTTP {response.status_code}: {body.decode(errors='replace').strip()}")


def _backoff(attempt: int) -> float:
    return min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1))

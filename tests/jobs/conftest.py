"""A bulk-job stack: one front, two single-process workers and beat on PostgreSQL and Redis.

Chunks are small and the sweep fast, so that a killed worker's chunks come
back within seconds; the workers can be killed and replaced by a test.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field

import httpx
import pytest
import redis

from shared.db.migrate import open_database
from tests.conftest import REDIS_URL, Customer, Stack, base_env, delete_redis_keys
from tests.servers import Process, Service

WORKERS = 2
JOB_TIMEOUT_SECONDS = 180
POLL_SECONDS = 0.2
ACTIVE = ("queued", "running", "cancelling")


@dataclass
class JobStack(Stack):
    folder: object = None
    workers: list[Process] = field(default_factory=list)
    beat: Process | None = None

    def start_worker(self) -> Process:
        log = self.folder / f"worker-{len(self.workers)}.log"
        worker = Process(["worker", "--concurrency", "1"], self.env, log)
        self.workers.append(worker)
        return worker

    def submit(self, customer: Customer, body, content_type="application/json", **kwargs):
        content = body if isinstance(body, (bytes, str)) else json.dumps(body)
        headers = {**customer.headers, "Content-Type": content_type, **kwargs.pop("headers", {})}
        with self.client() as client:
            return client.post("/api/v1/jobs", content=content, headers=headers, **kwargs)

    def job(self, customer: Customer, job_id: str) -> dict:
        with self.client() as client:
            response = client.get(f"/api/v1/jobs/{job_id}", headers=customer.headers)
        assert response.status_code == 200, response.text
        return response.json()

    def wait(self, customer: Customer, job_id: str, until=lambda job: job["status"] not in ACTIVE) -> dict:
        deadline = time.monotonic() + JOB_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            job = self.job(customer, job_id)
            if until(job):
                return job
            time.sleep(POLL_SECONDS)
        raise AssertionError(f"job {job_id} still {job['status']}: {job['counts']}")

    def results(self, customer: Customer, job_id: str, fmt: str = "jsonl") -> httpx.Response:
        with self.client() as client:
            return client.get(
                f"/api/v1/jobs/{job_id}/results", params={"format": fmt}, headers=customer.headers
            )


def job_stack_env(database_url: str, redis_url: str, namespace: str) -> dict[str, str]:
    """Small chunks, a fast sweep, limits no test reaches."""
    return base_env(
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=redis_url,
        REDIS_URL=redis_url,
        REDIS_NAMESPACE=namespace,
        JOB_CHUNK_SIZE="5",
        JOB_CHUNKS_IN_FLIGHT="2",
        JOB_STALE_SECONDS="3",
        JOB_SWEEP_INTERVAL_SECONDS="1",
        DEFAULT_PER_MINUTE="100000",
        DEFAULT_PER_HOUR="100000",
        DEFAULT_PER_DAY="100000",
    )


def start_job_stack(env: dict[str, str], folder, workers: int) -> JobStack:
    database_url = env["DATABASE_URL"]
    open_database(database_url).dispose()
    front = Service(env, folder / "front.log")
    stack = JobStack(front.url, env, database_url, [front], folder=folder)
    for _ in range(workers):
        stack.start_worker()
    stack.beat = Process(["beat"], env, folder / "beat.log")
    return stack


def stop_job_stack(stack: JobStack) -> None:
    for process in [*stack.fronts, *stack.workers, stack.beat]:
        if process is not None:
            process.stop()


@pytest.fixture(scope="session")
def jobs_stack(tmp_path_factory, postgres_url, built_indexes) -> JobStack:
    namespace = f"taxonomist-jobs-test-{uuid.uuid4().hex[:8]}"
    env = job_stack_env(postgres_url, REDIS_URL, namespace)
    stack = start_job_stack(env, tmp_path_factory.mktemp("jobs"), WORKERS)
    yield stack
    stop_job_stack(stack)
    delete_redis_keys(namespace)
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{namespace}:*"):
        client.delete(key)

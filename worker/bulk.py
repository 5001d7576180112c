"""Celery tasks of bulk jobs, on the `bulk` queue (worker.celery_app routes them there).

Chunks are acknowledged late and rejected back to the queue if their worker
process dies, so a SIGKILL loses nothing; the item updates they make are
idempotent, so a redelivery finds the work done. Arguments are ids and
positions only: Flower shows "job=... chunk=... items=a-b", never a product.
"""

from __future__ import annotations

from celery import shared_task

from shared.flows import run_chunk as run_chunk_flow
from shared.flows.queue import RUN_CHUNK_TASK
from shared.jobs.state import Chunk
from worker import runtime
from worker.priority import idle_priority


@shared_task(
    name=RUN_CHUNK_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # An upstream rate limit re-queues the chunk as often as it takes (up to the job's deadline).
    max_retries=None,
)
def run_chunk(self, job_id: str, index: int, start: int, stop: int) -> None:
    current = runtime.current()
    with idle_priority():
        retry_after = run_chunk_flow.run_chunk(
            current.database,
            current.classifier,
            self.app,
            Chunk(job_id, index, start, stop),
            claimer=self.request.id,
        )
    if retry_after is not None:
        raise self.retry(countdown=retry_after)

"""Celery tasks of bulk jobs, on the `bulk` queue (worker.celery_app routes them there).

Chunks are acknowledged late and rejected back to the queue if their worker
process dies, so a SIGKILL loses nothing; the item updates they make are
idempotent, so a redelivery finds the work done. Arguments are ids and
positions only: Flower shows "job=... chunk=... items=a-b", never a product.
"""

from __future__ import annotations

from celery import Celery, shared_task

from shared.jobs import runner
from shared.jobs.service import Chunk
from worker import runtime
from worker.celery_app import RUN_CHUNK_TASK
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
        run = runner.run_chunk(
            current.database,
            current.classifier,
            Chunk(job_id, index, start, stop),
            claimer=self.request.id,
            deadline_seconds=current.settings.job_deadline_seconds,
        )
    send(self.app, run.next_chunks)
    if run.retry_after is not None:
        raise self.retry(countdown=run.retry_after)


def send(app: Celery, chunks: list[Chunk]) -> None:
    # By name: the front sends chunks too, and needs the app, not this module's code.
    for chunk in chunks:
        app.send_task(
            RUN_CHUNK_TASK,
            args=(chunk.job_id, chunk.index, chunk.start, chunk.stop),
            argsrepr=chunk.describe(),
        )

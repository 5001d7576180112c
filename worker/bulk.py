"""Celery tasks of bulk jobs, on the `bulk` queue, and the sweep that keeps jobs moving.

Chunks are acknowledged late and rejected back to the queue if their worker
process dies, so a SIGKILL loses nothing; the item updates they make are
idempotent, so a redelivery finds the work done. Arguments are ids and
positions only: Flower shows "job=... chunk=... items=a-b", never a product.
"""

from __future__ import annotations

import logging
import threading
import time

from celery.signals import worker_init

from shared.db.session import Database
from shared.jobs import runner, service
from shared.jobs.service import Chunk
from shared.settings import Settings
from worker import runtime
from worker.celery_app import app

logger = logging.getLogger(__name__)

BULK_QUEUE = "bulk"


@app.task(
    name="taxonomist.jobs.run_chunk",
    bind=True,
    queue=BULK_QUEUE,
    acks_late=True,
    reject_on_worker_lost=True,
    # An upstream rate limit re-queues the chunk as often as it takes (up to the job's deadline).
    max_retries=None,
)
def run_chunk(self, job_id: str, index: int, start: int, stop: int) -> None:
    current = runtime.current()
    run = runner.run_chunk(
        current.database,
        current.classifier,
        Chunk(job_id, index, start, stop),
        claimer=self.request.id,
        deadline_seconds=current.settings.job_deadline_seconds,
    )
    send(run.next_chunks)
    if run.retry_after is not None:
        raise self.retry(countdown=run.retry_after)


def send(chunks: list[Chunk]) -> None:
    for chunk in chunks:
        run_chunk.apply_async(
            args=(chunk.job_id, chunk.index, chunk.start, chunk.stop), argsrepr=chunk.describe()
        )


def sweep_once(settings: Settings, database: Database) -> None:
    with database.session() as session:
        chunks, deleted = service.sweep(
            session, settings.job_stale_seconds, settings.job_retention_days
        )
    send(chunks)
    if chunks or deleted:
        logger.info("job sweep: %d chunks sent again, %d expired jobs deleted", len(chunks), deleted)


def _sweep_forever(settings: Settings) -> None:
    database = Database(settings.database_url)
    while True:
        time.sleep(settings.job_sweep_interval_seconds)
        try:
            sweep_once(settings, database)
        except Exception:
            logger.exception("job sweep failed; trying again next interval")


@worker_init.connect
def _start_sweeper(**_) -> None:
    # Every worker's main process sweeps (the serving process in the embedded
    # mode): sweeps are idempotent, so more than one running is harmless.
    settings = Settings.from_environ()
    if settings.job_sweep_interval_seconds > 0:
        threading.Thread(
            target=_sweep_forever,
            args=(settings,),
            name="job-sweeper",
            daemon=True,
        ).start()

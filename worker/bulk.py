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

import redis
from celery.signals import worker_init, worker_process_init

from shared.db.session import Database
from shared.jobs import runner, service
from shared.jobs.service import Chunk
from shared.settings import Settings
from worker import runtime
from worker.celery_app import app
from worker.priority import idle_priority

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
    with idle_priority():
        run = runner.run_chunk(
            current.database,
            current.classifier,
            Chunk(job_id, index, start, stop),
            claimer=self.request.id,
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
    redis_url = settings.shared_redis_url
    turns = redis.Redis.from_url(redis_url) if redis_url else None
    turn_key = f"{settings.redis_namespace}:jobs:sweep-turn"
    interval = settings.job_sweep_interval_seconds
    while True:
        time.sleep(interval)
        # Anything may fail here (Redis restarting, the database away): the
        # thread must outlive it, or no job of this worker recovers again.
        try:
            # One sweep per interval across the fleet: whoever sets the key first.
            if turns is None or turns.set(turn_key, "1", nx=True, ex=interval):
                sweep_once(settings, database)
        except Exception:
            logger.exception("job sweep failed; trying again next interval")


def _start_sweeper(settings: Settings) -> None:
    if settings.job_sweep_interval_seconds > 0:
        threading.Thread(
            target=_sweep_forever, args=(settings,), name="job-sweeper", daemon=True
        ).start()


@worker_init.connect
def _sweep_in_embedded_worker(**_) -> None:
    # The embedded worker's threads live in the serving process, which sweeps.
    settings = Settings.from_environ()
    if settings.embedded:
        _start_sweeper(settings)


@worker_process_init.connect
def _sweep_in_pool_process(**_) -> None:
    # In pool processes, not the main one: a thread in a process that forks
    # can leave a lock held in its children.
    _start_sweeper(Settings.from_environ())

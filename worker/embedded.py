"""A Celery worker running in threads of the serving process (the embedded mode)."""

from __future__ import annotations

import threading

from celery import Celery
from celery.worker import WorkController

from worker.celery_app import BULK_QUEUE, INTERACTIVE_QUEUE

EMBEDDED_WORKER_THREADS = 2


def start_embedded_worker(app: Celery, threads: int = EMBEDDED_WORKER_THREADS) -> WorkController:
    worker = WorkController(
        app=app,
        pool="threads",
        concurrency=threads,
        queues=[INTERACTIVE_QUEUE, BULK_QUEUE],
        loglevel="WARNING",
        # One process, nobody to talk to: no heartbeats, no cluster chatter.
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
    )
    threading.Thread(target=worker.start, name="embedded-celery-worker", daemon=True).start()
    return worker

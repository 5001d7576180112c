"""A Celery worker running in threads of the serving process (the embedded mode)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from celery import Celery
from celery.worker import WorkController

from shared.flows.queue import BULK_QUEUE, INTERACTIVE_QUEUE
from worker import runtime
from worker.celery_app import TaxonomistCelery
from worker.periodic import start_embedded_timer
from worker.replies import InProcessReplies

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


def start_in_process(app: TaxonomistCelery) -> InProcessReplies:
    """The embedded mode's worker and periodic work: the classifier loaded here, tasks run in
    this process's threads.

    The front waits for their outcomes on the channel returned.
    """
    replies = InProcessReplies()
    worker_runtime = runtime.WorkerRuntime.build(app.settings, replies)
    runtime.install(worker_runtime)
    start_embedded_worker(app)
    # Classifications skip the in-memory broker: they run on threads of their
    # own as soon as they are sent (bulk chunks keep the worker's threads).
    app.loader.import_default_modules()
    app.interactive_threads = ThreadPoolExecutor(
        EMBEDDED_WORKER_THREADS, thread_name_prefix="embedded-classify"
    )
    start_embedded_timer(app, worker_runtime.database)
    return replies

"""The Celery application (`celery -A worker.celery_app worker` finds it here).

Its broker comes from CELERY_BROKER_URL; with none, an in-memory broker
serves the embedded mode, where the worker runs inside `taxonomist serve`.
"""

from __future__ import annotations

from celery import Celery

# Every model, so that the tasks' foreign keys resolve however the worker is
# started (`celery -A worker.celery_app` imports nothing else first).
import shared.db.models  # noqa: F401
from shared.flows.queue import INTERACTIVE_QUEUE
from shared.settings import Settings

EMBEDDED_BROKER_URL = "memory://"
# The in-memory transport polls; its default of one second would be every
# request's latency. Five milliseconds costs a few wake-ups, nothing more.
EMBEDDED_POLLING_SECONDS = 0.005


def make_celery(settings: Settings) -> Celery:
    app = Celery("taxonomist", include=["worker.tasks", "worker.bulk"])
    app.conf.update(
        broker_url=settings.celery_broker_url or EMBEDDED_BROKER_URL,
        broker_connection_retry_on_startup=True,
        broker_transport_options=(
            {"polling_interval": EMBEDDED_POLLING_SECONDS}
            if settings.embedded
            else {
                "global_keyprefix": f"{settings.redis_namespace}:",
                # A worker on both queues takes interactive tasks first
                # (queues in the order given), never round-robin with bulk.
                "queue_order_strategy": "priority",
            }
        ),
        task_default_queue=INTERACTIVE_QUEUE,
        task_serializer="json",
        accept_content=["json"],
        # Outcomes travel through worker.replies, not through a result backend.
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        # Flower shows tasks from these events.
        worker_send_task_events=True,
        task_send_sent_event=True,
    )
    return app


app = make_celery(Settings.from_environ())

"""The Celery application, built from the `Settings` it is given (`make_celery`).

Its broker is CELERY_BROKER_URL; with none, an in-memory broker serves the
embedded mode, where the worker runs inside `taxonomist serve`. Tasks are sent
by name, so a sender needs this module and not the tasks' code.
`celery -A worker.celery_app worker` finds `app` here, built from the
environment when Celery asks for it.
"""

from __future__ import annotations

import functools
from concurrent.futures import Executor
from typing import Any

from celery import Celery

# Every model, so that the tasks' foreign keys resolve however the worker is
# started (`celery -A worker.celery_app` imports nothing else first).
import shared.db.models  # noqa: F401
from shared.flows.queue import BULK_QUEUE, INTERACTIVE_QUEUE, RUN_CHUNK_TASK
from shared.redis_pool import RedisPoolLimits
from shared.settings import Settings
from worker.direct_send import DIRECT_OPTIONS, DirectSender, accepts_url
from worker.schedule import beat_schedule

TASK_MODULES = ["worker.tasks", "worker.bulk", "worker.periodic"]
EMBEDDED_BROKER_URL = "memory://"
# The in-memory transport polls. Classifications do not go through it (see
# `TaxonomistCelery.send_task`): a tenth of a second is a bulk chunk's wait at
# most, where five milliseconds cost the serving process 200 wake-ups a second.
EMBEDDED_POLLING_SECONDS = 0.1
# Beat keeps its schedule in memory: every entry is a short interval, so a
# restarted scheduler loses nothing by starting the intervals afresh.
IN_MEMORY_SCHEDULER = "celery.beat:Scheduler"


class TaxonomistCelery(Celery):
    """A Celery app that carries the settings it was built from to its worker processes."""

    def __init__(self, settings: Settings) -> None:
        super().__init__("taxonomist", include=TASK_MODULES, set_as_current=False)
        self.settings = settings
        # The embedded mode's threads that run interactive tasks at once
        # (worker.embedded); None: every task goes through the broker.
        self.interactive_threads: Executor | None = None
        # Interactive tasks in one LPUSH on a Redis broker (worker.direct_send);
        # None: through Celery.
        self.direct_sender: DirectSender | None = None

    def send_task(
        self, name: str, args: Any = None, kwargs: Any = None, *more: Any, **options: Any
    ) -> Any:
        """Celery's (with its whole signature: beat and `apply_async` pass
        kwargs and more by position), but for interactive tasks in the embedded
        mode: the in-memory broker is polled, and its wait was most of a
        classification's latency. On a Redis broker, an interactive task sent
        with positional arguments and the direct options only is one LPUSH of
        the message Celery would build (worker.direct_send): its task id is
        returned."""
        if options.get("queue") == INTERACTIVE_QUEUE:
            if self.interactive_threads is not None:
                self.interactive_threads.submit(self.tasks[name], *(args or ()), **(kwargs or {}))
                return None
            if (
                self.direct_sender is not None
                and not kwargs
                and not more
                and "argsrepr" in options
                and options.keys() <= DIRECT_OPTIONS
            ):
                return self.direct_sender.send(name, args, reply_to=self.thread_oid, **options)
        return super().send_task(name, args, kwargs, *more, **options)


def make_celery(settings: Settings) -> TaxonomistCelery:
    app = TaxonomistCelery(settings)
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
                # Messages taken but not yet acknowledged are kept in the
                # worker's memory, not in Redis (the unacked hash and index:
                # a MULTI on receipt and another on each acknowledgement,
                # about a third of the consumer's CPU). A warm shutdown and
                # a pool process lost (`reject_on_worker_lost`) still put
                # them back on their queue; what a killed worker had taken
                # is lost to Redis, where it used to come back after the
                # visibility timeout (an hour): an interactive task had long
                # expired by then, and a bulk chunk is sent again by the
                # jobs' sweep after JOB_STALE_SECONDS (docs/bulk-jobs.md).
                "ack_emulation": False,
            }
        ),
        task_default_queue=INTERACTIVE_QUEUE,
        task_routes={RUN_CHUNK_TASK: {"queue": BULK_QUEUE}},
        task_serializer="json",
        accept_content=["json"],
        # Outcomes travel through worker.replies, not through a result backend.
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        # Task events (received, started, succeeded) cost the worker a Redis
        # PUBLISH each, about a fifth of its CPU per synchronous request. Off
        # until a monitor asks: Flower sends `enable_events` to every worker
        # when it starts and every few seconds, and shows tasks from then on.
        worker_send_task_events=False,
        # No "task-sent" event from the sender either: it was a second message
        # per request, about 6% of the front's CPU (docs/throughput.md).
        task_send_sent_event=False,
        beat_schedule=beat_schedule(settings),
        beat_scheduler=IN_MEMORY_SCHEDULER,
    )
    if not settings.embedded and accepts_url(settings.celery_broker_url):
        app.direct_sender = DirectSender(
            settings.celery_broker_url,
            app.conf.broker_transport_options["global_keyprefix"],
            RedisPoolLimits.of(settings),
        )
    return app


@functools.cache
def _app_from_environ() -> TaxonomistCelery:
    return make_celery(Settings.from_environ())


def __getattr__(name: str) -> TaxonomistCelery:
    # Only Celery's own command line asks for `app`; our code builds its own.
    if name == "app":
        return _app_from_environ()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

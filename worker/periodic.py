"""Periodic work: refund stale reservations, revive stuck jobs and delete expired ones.

In production `taxonomist beat`, the fleet's one scheduler, sends these tasks
on the schedule of worker.schedule and any worker runs them; in the embedded
mode a timer of the serving process calls the same functions. Both are safe
to run twice at once: settlement and revival are compare-and-set.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from celery import shared_task

from shared.db.session import Database
from shared.flows.sweep import sweep_jobs, sweep_reservations
from worker import runtime
from worker.celery_app import TaxonomistCelery
from worker.schedule import REFUND_STALE_TASK, SWEEP_JOBS_TASK, periodic_intervals

logger = logging.getLogger(__name__)


def refund_stale_reservations(app: TaxonomistCelery, database: Database) -> int:
    return sweep_reservations(database)


def revive_and_expire_jobs(app: TaxonomistCelery, database: Database) -> None:
    sweep_jobs(app.settings, database, app)


PERIODIC_WORK: dict[str, Callable[[TaxonomistCelery, Database], object]] = {
    REFUND_STALE_TASK: refund_stale_reservations,
    SWEEP_JOBS_TASK: revive_and_expire_jobs,
}


@shared_task(name=REFUND_STALE_TASK, bind=True)
def refund_stale_task(self) -> None:
    refund_stale_reservations(self.app, runtime.current().database)


@shared_task(name=SWEEP_JOBS_TASK, bind=True)
def sweep_jobs_task(self) -> None:
    revive_and_expire_jobs(self.app, runtime.current().database)


def start_embedded_timer(app: TaxonomistCelery, database: Database) -> threading.Event:
    """Run the periodic work on its intervals in threads of this process; set the event to stop."""
    stop = threading.Event()
    for name, interval in periodic_intervals(app.settings).items():
        threading.Thread(
            target=_every,
            args=(interval, PERIODIC_WORK[name], app, database, stop),
            name=f"periodic-{name}",
            daemon=True,
        ).start()
    return stop


def _every(
    interval: float,
    work: Callable[[TaxonomistCelery, Database], object],
    app: TaxonomistCelery,
    database: Database,
    stop: threading.Event,
) -> None:
    # A first turn at start: a process restarted after a crash refunds what the crash left.
    while True:
        # Anything may fail here (the database away): the timer must outlive
        # it, or nothing in this process is swept again.
        try:
            work(app, database)
        except Exception:
            logger.exception("periodic %s failed; trying again next interval", work.__name__)
        if stop.wait(interval):
            return

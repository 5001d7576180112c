"""Periodic work: one beat schedule in production, the same functions on a timer in the embedded mode."""

from __future__ import annotations

import time
from datetime import timedelta


from shared.credits import service as credits
from shared.db.base import utcnow
from shared.settings import Settings
from tests.credits.test_service import balance, new_account
from shared.flows.queue import BULK_QUEUE, CLASSIFY_TASK, INTERACTIVE_QUEUE, RUN_CHUNK_TASK
from worker.celery_app import make_celery
from worker.periodic import start_embedded_timer
from worker.schedule import REFUND_STALE_TASK, SWEEP_JOBS_TASK

TIMER_WAIT_SECONDS = 15


def test_the_beat_schedule_holds_each_sweep_at_its_interval():
    app = make_celery(Settings(reservation_sweep_interval_seconds=45, job_sweep_interval_seconds=7))
    schedule = app.conf.beat_schedule
    assert {entry["task"]: entry["schedule"] for entry in schedule.values()} == {
        REFUND_STALE_TASK: 45.0,
        SWEEP_JOBS_TASK: 7.0,
    }
    assert schedule[SWEEP_JOBS_TASK]["options"] == {"expires": 7.0}


def test_an_interval_of_zero_leaves_its_sweep_out():
    app = make_celery(Settings(job_sweep_interval_seconds=0))
    assert list(app.conf.beat_schedule) == [REFUND_STALE_TASK]


def test_the_scheduled_tasks_are_registered_under_their_names():
    app = make_celery(Settings())
    app.loader.import_default_modules()
    assert {REFUND_STALE_TASK, SWEEP_JOBS_TASK, CLASSIFY_TASK, RUN_CHUNK_TASK} <= set(app.tasks)
    assert app.amqp.router.route({}, RUN_CHUNK_TASK)["queue"].name == BULK_QUEUE
    assert app.amqp.router.route({}, CLASSIFY_TASK)["queue"].name == INTERACTIVE_QUEUE


def test_the_app_is_built_from_the_settings_it_is_given():
    app = make_celery(
        Settings(celery_broker_url="redis://127.0.0.1:6379/3", redis_namespace="elsewhere")
    )
    assert app.conf.broker_url == "redis://127.0.0.1:6379/3"
    assert app.conf.broker_transport_options["global_keyprefix"] == "elsewhere:"
    assert make_celery(Settings()).conf.broker_url == "memory://"


def test_the_embedded_timer_refunds_a_stale_reservation(database):
    account_id = new_account(database, monthly=2)
    with database.session() as session:
        # One hold whose time to live has passed, one still within it.
        credits.hold(session, account_id, expires_at=utcnow() + timedelta(hours=-1))
        credits.hold(session, account_id, expires_at=utcnow() + timedelta(hours=1))
    # No job sweep: the PostgreSQL database is shared with other tests' stacks.
    settings = Settings(reservation_sweep_interval_seconds=1, job_sweep_interval_seconds=0)
    stop = start_embedded_timer(make_celery(settings), database)
    try:
        deadline = time.monotonic() + TIMER_WAIT_SECONDS
        while balance(database, account_id).monthly == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        stop.set()
    # The stale credit came back; the fresh one is still held.
    assert balance(database, account_id).monthly == 1

"""The job use cases: submit (sending its first chunks itself), run a chunk, cancel, sweep and retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from shared.db.base import utcnow
from shared.flows.cancel_job import cancel_job
from shared.flows.queue import BULK_QUEUE, RUN_CHUNK_TASK
from shared.flows.run_chunk import run_chunk
from shared.flows.submit_job import submit_job
from shared.flows.sweep import sweep_jobs
from shared.jobs import actions
from shared.jobs.errors import JobNotFound
from shared.jobs.models import JOB_CANCELLED, JOB_COMPLETED, JOB_QUEUED, Job, JobItem
from shared.jobs.state import Chunk
from shared.settings import Settings
from tests.flows.helpers import KnifeClassifier, RecordingSender, balance, new_account

RETENTION_DAYS = 30
SETTINGS = Settings(job_chunk_size=2, job_chunks_in_flight=1, job_retention_days=RETENTION_DAYS)
LINES = b'{"id": "a", "product": "knife"}\n{"id": "b", "product": "fork"}\n{"id": "c", "product": "spoon"}\n'


def submit(database, account_id, sender=None, key=None) -> Job:
    return submit_job(
        database,
        SETTINGS,
        sender if sender is not None else RecordingSender(),
        account_id,
        LINES,
        "application/x-ndjson",
        {},
        key,
    )


def sent_chunks(sender: RecordingSender) -> list[Chunk]:
    assert {(name, options["queue"]) for name, _, options in sender.sent} <= {(RUN_CHUNK_TASK, BULK_QUEUE)}
    return [Chunk(*args) for _, args, _ in sender.sent]


def test_a_submission_holds_its_credits_and_sends_its_first_chunks_by_name(database):
    account_id = new_account(database, monthly=5)
    sender = RecordingSender()
    job = submit(database, account_id, sender)
    assert (job.status, job.total) == (JOB_QUEUED, 3)
    assert sent_chunks(sender) == [Chunk(job.id, 0, 0, 2)]
    assert balance(database, account_id) == 2


def test_an_idempotent_repeat_sends_nothing_again(database):
    account_id = new_account(database, monthly=9)
    first = submit(database, account_id, key="k1")
    sender = RecordingSender()
    assert submit(database, account_id, sender, key="k1").id == first.id
    assert sender.sent == []
    assert balance(database, account_id) == 6


def test_a_broker_away_at_submission_leaves_the_job_for_the_sweep(database):
    account_id = new_account(database, monthly=5)
    job = submit(database, account_id, RecordingSender(fails=True))
    with database.session() as session:
        session.execute(update(Job).values(progressed_at=utcnow() - timedelta(hours=1)))
    sender = RecordingSender()
    sweep_jobs(SETTINGS, database, sender)
    assert sent_chunks(sender) == [Chunk(job.id, 0, 0, 2)]


def test_running_the_chunks_completes_the_job_each_sending_the_next(database):
    account_id = new_account(database, monthly=5)
    sender = RecordingSender()
    job = submit(database, account_id, sender)
    for position in range(2):
        chunk = sent_chunks(sender)[position]
        retry_after = run_chunk(database, KnifeClassifier(), sender, chunk, f"task-{position}")
        assert retry_after is None
    assert len(sender.sent) == 2  # the first chunk sent the second, the last sent nothing
    with database.session() as session:
        done = actions.get(session, account_id, job.id)
        assert (done.status, done.done, done.found) == (JOB_COMPLETED, 3, 3)
    assert balance(database, account_id) == 2


def test_cancelling_refunds_what_has_not_started(database):
    account_id = new_account(database, monthly=5)
    job = submit(database, account_id)
    assert cancel_job(database, account_id, job.id).status == JOB_CANCELLED
    assert balance(database, account_id) == 5
    with pytest.raises(JobNotFound):
        cancel_job(database, account_id + 1, job.id)


def test_jobs_finished_longer_ago_than_the_retention_are_deleted_with_their_items(database):
    account_id = new_account(database, monthly=9)
    old, recent = submit(database, account_id), submit(database, account_id)
    for job in (old, recent):
        cancel_job(database, account_id, job.id)
    with database.session() as session:
        session.execute(
            update(Job)
            .where(Job.id == old.id)
            .values(finished_at=utcnow() - timedelta(days=RETENTION_DAYS, hours=1))
        )
        session.execute(
            update(Job)
            .where(Job.id == recent.id)
            .values(finished_at=utcnow() - timedelta(days=RETENTION_DAYS - 1))
        )
    sweep_jobs(SETTINGS, database, RecordingSender())
    with database.session() as session:
        assert session.scalars(select(Job.id)).all() == [recent.id]
        assert set(session.scalars(select(JobItem.job_id))) == {recent.id}

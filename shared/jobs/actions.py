"""What an account does with its jobs: cancel one, read one, list them, page through results."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterator

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.db.session import Database
from shared.jobs.errors import JobNotFound
from shared.jobs.models import ENDED_ITEM_STATUSES, JOB_CANCELLING, JOB_QUEUED, JOB_RUNNING, Job, JobItem
from shared.jobs.state import cancel_queued, finish_if_ended, locked

# Rows per page when streaming results.
STREAM_BATCH = 1_000


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[JobItem]
    next_cursor: int | None


def cancel(session: Session, account_id: int, job_id: str) -> Job:
    """Items not started end cancelled and refunded; running ones finish."""
    get(session, account_id, job_id)
    job = locked(session, job_id)
    if job is None:
        # Deleted by the retention sweep between the two reads.
        raise JobNotFound(job_id)
    if job.status in (JOB_QUEUED, JOB_RUNNING):
        job.status = JOB_CANCELLING
        cancel_queued(session, job)
        finish_if_ended(job)
    return job


def get(session: Session, account_id: int, job_id: str) -> Job:
    """The account's job; another account's job does not exist (JobNotFound)."""
    job = session.get(Job, job_id)
    if job is None or job.account_id != account_id:
        raise JobNotFound(job_id)
    return job


def list_jobs(
    session: Session, account_id: int, limit: int, before: tuple[datetime, str] | None
) -> list[Job]:
    """The account's jobs, newest first, after the cursor (created_at, id) if any."""
    query = select(Job).where(Job.account_id == account_id)
    if before is not None:
        created_at, job_id = before
        query = query.where(
            (Job.created_at < created_at) | ((Job.created_at == created_at) & (Job.id < job_id))
        )
    return list(session.scalars(query.order_by(Job.created_at.desc(), Job.id.desc()).limit(limit)))


def results_page(session: Session, job_id: str, after: int | None, limit: int) -> Page:
    """Ended items in input order, after the position `after`."""
    query = select(JobItem).where(
        JobItem.job_id == job_id, JobItem.status.in_(ENDED_ITEM_STATUSES)
    )
    if after is not None:
        query = query.where(JobItem.position > after)
    rows = list(session.scalars(query.order_by(JobItem.position).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, rows[-1].position if more else None)


def iterate_results(database: Database, job_id: str) -> Iterator[JobItem]:
    """Every ended item, a batch per short transaction: memory stays flat."""
    after = None
    while True:
        with database.session() as session:
            page = results_page(session, job_id, after, STREAM_BATCH)
        yield from page.rows
        if page.next_cursor is None:
            return
        after = page.next_cursor

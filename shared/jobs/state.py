"""A job's state machine: the row lock every change takes first, chunks, cancelling, ending.

Exactly once, in effect: an item ends (done, failed or cancelled) through a
compare-and-set on its status, in the same transaction that moves the job's
counters and the credits it held. Every transaction that changes a job's
items locks the job row first, so those steps never interleave for a job,
on any number of processes; a duplicate delivery of a chunk finds its items
ended and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from shared.credits.models import OUTCOME_CANCELLED
from shared.db.base import utcnow
from shared.jobs import holds
from shared.jobs.models import (
    ACTIVE_JOB_STATUSES,
    ITEM_CANCELLED,
    ITEM_QUEUED,
    JOB_CANCELLED,
    JOB_CANCELLING,
    JOB_COMPLETED,
    JOB_FAILED,
    Job,
    JobItem,
)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One unit of queued work: the positions [start, stop) of a job."""

    job_id: str
    index: int
    start: int
    stop: int

    def describe(self) -> str:
        # What Flower and the logs show: never a product text or a key.
        return f"job={self.job_id} chunk={self.index} items={self.start}-{self.stop - 1}"


def chunk_of(job: Job, index: int) -> Chunk:
    start = index * job.chunk_size
    return Chunk(job.id, index, start, min(start + job.chunk_size, job.total))


def locked(session: Session, job_id: str) -> Job | None:
    # A write first: the row lock on PostgreSQL, the write lock on SQLite;
    # the read that follows then sees the latest committed state.
    session.execute(update(Job).where(Job.id == job_id).values(progressed_at=utcnow()))
    return session.scalar(
        select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
    )


def cancel_queued(session: Session, job: Job) -> None:
    cancelled = session.execute(
        update(JobItem)
        .where(JobItem.job_id == job.id, JobItem.status == ITEM_QUEUED)
        .values(status=ITEM_CANCELLED)
    ).rowcount  # type: ignore[attr-defined]  # an UPDATE's CursorResult
    holds.end(session, job, OUTCOME_CANCELLED, cancelled)
    job.cancelled += cancelled


def finish_if_ended(job: Job) -> None:
    if job.ended_items < job.total or job.status not in ACTIVE_JOB_STATUSES:
        return
    if job.status == JOB_CANCELLING:
        job.status = JOB_CANCELLED
    else:
        job.status = JOB_COMPLETED if job.done else JOB_FAILED
    job.finished_at = utcnow()

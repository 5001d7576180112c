"""Keeping jobs moving and the table small: revive stuck jobs, delete expired ones."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from shared.db.base import utcnow
from shared.jobs.models import (
    ACTIVE_JOB_STATUSES,
    ITEM_QUEUED,
    ITEM_RUNNING,
    JOB_CANCELLING,
    Job,
    JobItem,
)
from shared.jobs.state import Chunk, cancel_queued, chunk_of, finish_if_ended, locked


def sweep(session: Session, stale_seconds: int, retention_days: int) -> tuple[list[Chunk], int]:
    """Revive stuck jobs and delete expired ones.

    A job that has not moved for `stale_seconds` lost chunks somewhere (a
    worker killed with its messages, a broker restarted): its stale running
    items go back to the queue, and every sent chunk that still has queued
    items is named to send again. A duplicate is harmless: the claim of one
    of the two copies finds nothing. Returns (chunks to send, jobs deleted).
    """
    now = utcnow()
    cutoff = now - timedelta(seconds=stale_seconds)
    stuck = session.scalars(
        select(Job.id).where(Job.status.in_(ACTIVE_JOB_STATUSES), Job.progressed_at < cutoff)
    ).all()
    chunks = [chunk for job_id in stuck for chunk in _revive(session, job_id, cutoff)]
    expired = session.scalars(
        select(Job.id).where(Job.finished_at < now - timedelta(days=retention_days))
    ).all()
    if expired:
        session.execute(delete(JobItem).where(JobItem.job_id.in_(expired)))
        session.execute(delete(Job).where(Job.id.in_(expired)))
    return chunks, len(expired)


def _revive(session: Session, job_id: str, cutoff: datetime) -> list[Chunk]:
    job = locked(session, job_id)
    if job is None:
        return []
    session.execute(
        update(JobItem)
        .where(
            JobItem.job_id == job_id,
            JobItem.status == ITEM_RUNNING,
            JobItem.claimed_at < cutoff,
        )
        .values(status=ITEM_QUEUED, claimed_by=None, claimed_at=None)
    )
    if job.status == JOB_CANCELLING:
        cancel_queued(session, job)
        finish_if_ended(job)
        return []
    queued = session.scalars(
        select(JobItem.position).where(
            JobItem.job_id == job_id,
            JobItem.status == ITEM_QUEUED,
            JobItem.position < job.next_chunk * job.chunk_size,
        )
    )
    return [chunk_of(job, index) for index in sorted({p // job.chunk_size for p in queued})]

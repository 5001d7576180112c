"""Submitting a job: store it and its items, hold its credits, name its first chunks; idempotency.

Fair sharing: a job has at most `chunks_in_flight` chunks on the queue; each
chunk that ends sends the job's next one to the back of the queue, so the
chunks of concurrent jobs alternate whatever their sizes.
"""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from shared.classification.models import ClassificationRequest
from shared.db.base import utcnow
from shared.db.session import Database
from shared.jobs import holds
from shared.jobs.models import ITEM_QUEUED, JOB_QUEUED, Job, JobItem, item_columns, new_job_id
from shared.jobs.parsing import JobInput
from shared.jobs.state import Chunk, chunk_of

# Rows per INSERT when storing a submission.
INSERT_BATCH = 2_000


def submit(
    database: Database,
    account_id: int,
    job_input: JobInput,
    *,
    idempotency_key: str | None,
    chunk_size: int,
    chunks_in_flight: int,
    deadline_seconds: int,
) -> tuple[Job, list[Chunk]]:
    """Store the job, hold its credits, and name its first chunks to send.

    InsufficientCredits leaves nothing behind. With an idempotency key already
    used by the account, the existing job comes back and no chunk is to send.
    """
    if idempotency_key:
        with database.session() as session:
            existing = _by_idempotency_key(session, account_id, idempotency_key)
            if existing is not None:
                return existing, []
    try:
        with database.session() as session:
            return _create(
                session,
                account_id,
                job_input,
                idempotency_key,
                chunk_size,
                chunks_in_flight,
                deadline_seconds,
            )
    except IntegrityError:
        # The same key submitted concurrently: the other request's job won.
        with database.session() as session:
            existing = _by_idempotency_key(session, account_id, idempotency_key)
            if existing is None:
                raise
            return existing, []


def _by_idempotency_key(session: Session, account_id: int, key: str | None) -> Job | None:
    return session.scalar(
        select(Job).where(Job.account_id == account_id, Job.idempotency_key == key)
    )


def _create(
    session: Session,
    account_id: int,
    job_input: JobInput,
    idempotency_key: str | None,
    chunk_size: int,
    chunks_in_flight: int,
    deadline_seconds: int,
) -> tuple[Job, list[Chunk]]:
    total = len(job_input.items)
    now = utcnow()
    job = Job(
        id=new_job_id(),
        account_id=account_id,
        idempotency_key=idempotency_key,
        status=JOB_QUEUED,
        total=total,
        done=0,
        found=0,
        not_found=0,
        failed=0,
        cancelled=0,
        chunk_size=chunk_size,
        extra_columns=json.dumps(job_input.extra_columns) if job_input.extra_columns else None,
        created_at=now,
        # Stored: a later change of JOB_DEADLINE_SECONDS does not move old jobs' deadlines.
        deadline_at=now + timedelta(seconds=deadline_seconds),
    )
    holds.hold(session, job)
    job.next_chunk = min(chunks_in_flight, job.chunk_count)
    session.add(job)
    session.flush()
    rows = _item_rows(job.id, job_input)
    for start in range(0, total, INSERT_BATCH):
        session.execute(insert(JobItem), rows[start : start + INSERT_BATCH])
    return job, [chunk_of(job, index) for index in range(job.next_chunk)]


def _item_rows(job_id: str, job_input: JobInput) -> list[dict]:
    # Same text and options: classified once, answer reused (each still costs its credit).
    first_of: dict[ClassificationRequest, int] = {}
    rows = []
    for position, item in enumerate(job_input.items):
        original = first_of.setdefault(item.request, position)
        rows.append(
            {
                "job_id": job_id,
                "position": position,
                "item_id": item.item_id,
                **item_columns(item.request),
                "duplicate_of": original if original != position else None,
                "extra": json.dumps(item.extra) if item.extra else None,
                "status": ITEM_QUEUED,
            }
        )
    return rows

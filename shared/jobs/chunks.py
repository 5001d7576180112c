"""Running a chunk, as the job sees it: claim its items, read known answers, settle the ends.

Each step is one short transaction under the job row's lock (`state.locked`);
the classification in between happens outside any transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from shared.classification.messages import RATE_LIMITED
from shared.classification.models import ClassificationRequest
from shared.credits.models import (
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    OUTCOME_NOT_FOUND,
    OUTCOME_RATE_LIMITED,
)
from shared.db.base import utcnow
from shared.jobs import holds
from shared.jobs.models import (
    ITEM_DONE,
    ITEM_FAILED,
    ITEM_QUEUED,
    ITEM_RUNNING,
    JOB_CANCELLING,
    JOB_QUEUED,
    JOB_RUNNING,
    REQUEST_COLUMNS,
    Job,
    JobItem,
    request_of,
)
from shared.jobs.state import Chunk, cancel_queued, chunk_of, finish_if_ended, locked


@dataclass(frozen=True, slots=True)
class ClaimedItem:
    position: int
    request: ClassificationRequest
    duplicate_of: int | None


@dataclass(frozen=True, slots=True)
class ItemEnd:
    """How one item ended: DONE with the response body, or FAILED with an error text."""

    position: int
    status: str
    body: dict

    @property
    def found(self) -> bool:
        return bool(self.body.get("categoryFound"))

    @property
    def rate_limited(self) -> bool:
        """Failed because the upstream AI still refused at the job's deadline."""
        return self.status == ITEM_FAILED and self.body.get("error") == RATE_LIMITED


def claim_chunk(session: Session, chunk: Chunk, claimer: str) -> list[ClaimedItem]:
    """Take the chunk's queued items (and those this same task claimed before it died)."""
    job = locked(session, chunk.job_id)
    if job is None or job.status not in (JOB_QUEUED, JOB_RUNNING):
        return []
    now = utcnow()
    rows = session.execute(
        update(JobItem)
        .where(
            JobItem.job_id == chunk.job_id,
            JobItem.position >= chunk.start,
            JobItem.position < chunk.stop,
            (JobItem.status == ITEM_QUEUED)
            | ((JobItem.status == ITEM_RUNNING) & (JobItem.claimed_by == claimer)),
        )
        .values(status=ITEM_RUNNING, claimed_by=claimer, claimed_at=now)
        .returning(
            JobItem.position,
            JobItem.duplicate_of,
            *(getattr(JobItem, name) for name in REQUEST_COLUMNS),
        )
    ).all()
    if rows and job.status == JOB_QUEUED:
        job.status, job.started_at = JOB_RUNNING, now
    return sorted(
        (ClaimedItem(row.position, request_of(row), row.duplicate_of) for row in rows),
        key=lambda item: item.position,
    )


def known_answers(session: Session, job_id: str, positions: set[int]) -> dict[int, dict]:
    """The response bodies of items already done among `positions`."""
    if not positions:
        return {}
    rows = session.execute(
        select(JobItem.position, JobItem.result).where(
            JobItem.job_id == job_id,
            JobItem.position.in_(positions),
            JobItem.status == ITEM_DONE,
        )
    )
    return {row.position: json.loads(row.result) for row in rows}


def deadline_of(session: Session, job_id: str) -> datetime | None:
    """The deadline the job was submitted with."""
    return session.scalar(select(Job.deadline_at).where(Job.id == job_id))


def settle_chunk(
    session: Session, chunk: Chunk, ends: list[ItemEnd], release: list[int]
) -> list[Chunk]:
    """End items (each once), give `release` back to the queue, name the next chunk to send."""
    job = locked(session, chunk.job_id)
    if job is None:
        return []
    running = set(
        session.scalars(
            select(JobItem.position).where(
                JobItem.job_id == job.id,
                JobItem.position.in_([end.position for end in ends] + release),
                JobItem.status == ITEM_RUNNING,
            )
        )
    )
    ended = [end for end in ends if end.position in running]
    if ended:
        session.execute(
            update(JobItem),
            [
                {
                    "job_id": job.id,
                    "position": end.position,
                    "status": end.status,
                    "result": json.dumps(end.body),
                }
                for end in ended
            ],
        )
        _count_ends(session, job, ended)
    released = [position for position in release if position in running]
    if released:
        session.execute(
            update(JobItem)
            .where(JobItem.job_id == job.id, JobItem.position.in_(released))
            .values(status=ITEM_QUEUED, claimed_by=None, claimed_at=None)
        )
    if job.status == JOB_CANCELLING:
        cancel_queued(session, job)
    finish_if_ended(job)
    if release or job.status != JOB_RUNNING or job.next_chunk >= job.chunk_count:
        return []
    job.next_chunk += 1
    return [chunk_of(job, job.next_chunk - 1)]


def _count_ends(session: Session, job: Job, ended: list[ItemEnd]) -> None:
    done = [end for end in ended if end.status == ITEM_DONE]
    failed = len(ended) - len(done)
    found = sum(end.found for end in done)
    rate_limited = sum(end.rate_limited for end in ended)
    # One update of the hold per outcome for the whole chunk, never one per item.
    for outcome, count in (
        (OUTCOME_FOUND, found),
        (OUTCOME_NOT_FOUND, len(done) - found),
        (OUTCOME_FAILED, failed - rate_limited),
        (OUTCOME_RATE_LIMITED, rate_limited),
    ):
        holds.end(session, job, outcome, count)
    job.done += len(done)
    job.found += found
    job.not_found += len(done) - found
    job.failed += failed

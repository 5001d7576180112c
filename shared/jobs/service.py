"""Bulk jobs: submit, claim and settle chunks, cancel, sweep, read.

Exactly once, in effect: an item ends (done, failed or cancelled) through a
compare-and-set on its status, in the same transaction that moves the job's
counters and the credits it held. Every transaction that changes a job's
items locks the job row first, so those steps never interleave for a job,
on any number of processes; a duplicate delivery of a chunk finds its items
ended and changes nothing.

Fair sharing: a job has at most `chunks_in_flight` chunks on the queue; each
chunk that ends sends the job's next one to the back of the queue, so the
chunks of concurrent jobs alternate whatever their sizes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterator

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from shared.classification.models import ClassificationRequest
from shared.classification.messages import RATE_LIMITED
from shared.credits import service as credits
from shared.credits.models import (
    OUTCOME_CANCELLED,
    OUTCOME_FAILED,
    OUTCOME_FOUND,
    OUTCOME_NOT_FOUND,
    OUTCOME_RATE_LIMITED,
    PAID_OUTCOMES,
)
from shared.db.base import utcnow
from shared.db.session import Database
from shared.jobs.errors import JobNotFound
from shared.jobs.models import (
    ACTIVE_JOB_STATUSES,
    ENDED_ITEM_STATUSES,
    ITEM_CANCELLED,
    ITEM_DONE,
    ITEM_FAILED,
    ITEM_QUEUED,
    ITEM_RUNNING,
    JOB_CANCELLED,
    JOB_CANCELLING,
    JOB_COMPLETED,
    JOB_FAILED,
    JOB_QUEUED,
    JOB_RUNNING,
    Job,
    JobItem,
    new_job_id,
)
from shared.jobs.parsing import JobInput, parse_job
from shared.settings import Settings

# Rows per INSERT when storing a submission, and per page when streaming results.
INSERT_BATCH = 2_000
STREAM_BATCH = 1_000


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


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[JobItem]
    next_cursor: int | None


def chunk_of(job: Job, index: int) -> Chunk:
    start = index * job.chunk_size
    return Chunk(job.id, index, start, min(start + job.chunk_size, job.total))


# --- submission ------------------------------------------------------------


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


def submit_upload(
    database: Database,
    settings: Settings,
    account_id: int,
    body: bytes,
    content_type: str | None,
    options: dict[str, str],
    idempotency_key: str | None = None,
) -> tuple[Job, list[Chunk]]:
    """Parse a submission (JSON, JSON Lines or CSV) whole, then `submit` it.

    InvalidJobInput before anything is stored or charged.
    """
    job_input = parse_job(
        body, content_type, options, settings.max_job_items, settings.max_body_bytes
    )
    return submit(
        database,
        account_id,
        job_input,
        idempotency_key=idempotency_key,
        chunk_size=settings.job_chunk_size,
        chunks_in_flight=settings.job_chunks_in_flight,
        deadline_seconds=settings.job_deadline_seconds,
    )


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
    job_id = new_job_id()
    total = len(job_input.items)
    held = credits.hold(session, account_id, total, note=f"bulk job {job_id}")
    now = utcnow()
    job = Job(
        id=job_id,
        account_id=account_id,
        idempotency_key=idempotency_key,
        status=JOB_QUEUED,
        total=total,
        done=0,
        found=0,
        not_found=0,
        failed=0,
        cancelled=0,
        hold_id=held.id,
        chunk_size=chunk_size,
        extra_columns=json.dumps(job_input.extra_columns) if job_input.extra_columns else None,
        created_at=now,
        deadline_at=now + timedelta(seconds=deadline_seconds),
    )
    job.next_chunk = min(chunks_in_flight, job.chunk_count)
    session.add(job)
    session.flush()
    rows = _item_rows(job_id, job_input)
    for start in range(0, total, INSERT_BATCH):
        session.execute(insert(JobItem), rows[start : start + INSERT_BATCH])
    return job, [chunk_of(job, index) for index in range(job.next_chunk)]


def _item_rows(job_id: str, job_input: JobInput) -> list[dict]:
    # Same text and options: classified once, answer reused (each still costs its credit).
    first_of: dict[ClassificationRequest, int] = {}
    rows = []
    for position, item in enumerate(job_input.items):
        request = item.request
        original = first_of.setdefault(request, position)
        rows.append(
            {
                "job_id": job_id,
                "position": position,
                "item_id": item.item_id,
                "product": request.product,
                "taxonomy": request.taxonomy,
                "custom_instructions": request.custom_instructions,
                "leafs_only": request.leafs_only,
                "fallback_to_best_guess": request.fallback_to_best_guess,
                "duplicate_of": original if original != position else None,
                "extra": json.dumps(item.extra) if item.extra else None,
                "status": ITEM_QUEUED,
            }
        )
    return rows


# --- running chunks ----------------------------------------------------------


def claim_chunk(session: Session, chunk: Chunk, claimer: str) -> list[ClaimedItem]:
    """Take the chunk's queued items (and those this same task claimed before it died)."""
    job = _locked(session, chunk.job_id)
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
            JobItem.product,
            JobItem.taxonomy,
            JobItem.custom_instructions,
            JobItem.leafs_only,
            JobItem.fallback_to_best_guess,
            JobItem.duplicate_of,
        )
    ).all()
    if rows and job.status == JOB_QUEUED:
        job.status, job.started_at = JOB_RUNNING, now
    return sorted(
        (
            ClaimedItem(
                position=row.position,
                request=ClassificationRequest(
                    product=row.product,
                    taxonomy=row.taxonomy,
                    custom_instructions=row.custom_instructions,
                    leafs_only=row.leafs_only,
                    fallback_to_best_guess=row.fallback_to_best_guess,
                ),
                duplicate_of=row.duplicate_of,
            )
            for row in rows
        ),
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
    return session.scalar(select(Job.deadline_at).where(Job.id == job_id))


def settle_chunk(
    session: Session, chunk: Chunk, ends: list[ItemEnd], release: list[int]
) -> list[Chunk]:
    """End items (each once), give `release` back to the queue, name the next chunk to send."""
    job = _locked(session, chunk.job_id)
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
        _cancel_queued(session, job)
    _finish_if_ended(job)
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
        _end_held(session, job, outcome, count)
    job.done += len(done)
    job.found += found
    job.not_found += len(done) - found
    job.failed += failed


def _end_held(session: Session, job: Job, outcome: str, count: int) -> None:
    """End `count` units of the job's hold; the items' status change made them end once."""
    if not count:
        return
    if outcome in PAID_OUTCOMES:
        credits.consume(session, job.hold_id, outcome, count)
    else:
        credits.refund(session, job.hold_id, outcome, count)


def _cancel_queued(session: Session, job: Job) -> None:
    cancelled = session.execute(
        update(JobItem)
        .where(JobItem.job_id == job.id, JobItem.status == ITEM_QUEUED)
        .values(status=ITEM_CANCELLED)
    ).rowcount
    _end_held(session, job, OUTCOME_CANCELLED, cancelled)
    job.cancelled += cancelled


def _finish_if_ended(job: Job) -> None:
    if job.ended_items < job.total or job.status not in ACTIVE_JOB_STATUSES:
        return
    if job.status == JOB_CANCELLING:
        job.status = JOB_CANCELLED
    else:
        job.status = JOB_COMPLETED if job.done else JOB_FAILED
    job.finished_at = utcnow()


def _locked(session: Session, job_id: str) -> Job | None:
    # A write first: the row lock on PostgreSQL, the write lock on SQLite;
    # the read that follows then sees the latest committed state.
    session.execute(update(Job).where(Job.id == job_id).values(progressed_at=utcnow()))
    return session.scalar(
        select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
    )


# --- the caller's actions ------------------------------------------------------


def cancel(session: Session, account_id: int, job_id: str) -> Job:
    """Items not started end cancelled and refunded; running ones finish."""
    get(session, account_id, job_id)
    job = _locked(session, job_id)
    if job.status in (JOB_QUEUED, JOB_RUNNING):
        job.status = JOB_CANCELLING
        _cancel_queued(session, job)
        _finish_if_ended(job)
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


# --- the periodic sweep ----------------------------------------------------------


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
    job = _locked(session, job_id)
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
        _cancel_queued(session, job)
        _finish_if_ended(job)
        return []
    queued = session.scalars(
        select(JobItem.position).where(
            JobItem.job_id == job_id,
            JobItem.status == ITEM_QUEUED,
            JobItem.position < job.next_chunk * job.chunk_size,
        )
    )
    return [chunk_of(job, index) for index in sorted({p // job.chunk_size for p in queued})]


# --- what the API shows ------------------------------------------------------------


def job_view(job: Job) -> dict:
    return {
        "id": job.id,
        "status": job.status,
        "counts": {
            "total": job.total,
            "done": job.done,
            "found": job.found,
            "notFound": job.not_found,
            "failed": job.failed,
            "cancelled": job.cancelled,
        },
        "credits": {"held": job.total, "consumed": job.done, "refunded": job.refunded},
        "createdAt": _iso(job.created_at),
        "startedAt": _iso(job.started_at),
        "finishedAt": _iso(job.finished_at),
        "estimatedSecondsLeft": _seconds_left(job),
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _seconds_left(job: Job) -> float | None:
    """The rate so far applied to what is left; None until the first item ends."""
    if job.status not in ACTIVE_JOB_STATUSES:
        return 0.0
    processed = job.done + job.failed
    if not job.started_at or not processed:
        return None
    elapsed = (utcnow() - job.started_at).total_seconds()
    return round(elapsed / processed * (job.total - job.ended_items), 1)

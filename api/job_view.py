"""A job as the API and the dashboard show it (docs/bulk-jobs.md)."""

from __future__ import annotations

from datetime import datetime

from shared.db.base import utcnow
from shared.jobs.models import ACTIVE_JOB_STATUSES, Job


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

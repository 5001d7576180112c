"""The credits a job holds: taken whole at submission, then consumed or refunded per item.

Every call into `shared.credits` for a job is here, and only here.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from shared.credits import service as credits
from shared.credits.models import NOTE_FOUND, NOTE_NOT_FOUND
from shared.jobs.models import Job


def hold(session: Session, job: Job) -> None:
    """Hold the job's `total` credits (InsufficientCredits when the account lacks them)."""
    held = credits.hold(session, job.account_id, job.total, note=f"bulk job {job.id}")
    job.hold_monthly = held.monthly
    job.hold_topup = held.topup
    job.hold_renews_at = held.renews_at


def consume(session: Session, job: Job, found: int, not_found: int) -> None:
    credits.consume_held(
        session, job.account_id, [NOTE_FOUND] * found + [NOTE_NOT_FOUND] * not_found
    )


def refund(session: Session, job: Job, count: int, why: str) -> None:
    held = credits.BulkHold(job.hold_monthly, job.hold_topup, job.hold_renews_at)
    credits.refund_held(
        session, job.account_id, held, job.refunded, count, note=f"bulk job {job.id}: {count} {why}"
    )

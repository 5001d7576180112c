"""The credits a job holds: taken whole at submission, then each item's unit consumed or refunded.

Every call into `shared.credits` for a job is here, and only here.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from shared.credits import service as credits
from shared.credits.models import PAID_OUTCOMES
from shared.jobs.models import Job


def hold(session: Session, job: Job) -> None:
    """Hold the job's `total` credits (InsufficientCredits when the account lacks them)."""
    job.hold_id = credits.hold(session, job.account_id, job.total, note=f"bulk job {job.id}").id


def end(session: Session, job: Job, outcome: str, count: int) -> None:
    """End `count` units of the job's hold; the items' status change made them end once."""
    if not count:
        return
    if outcome in PAID_OUTCOMES:
        credits.consume(session, job.hold_id, outcome, count)
    else:
        credits.refund(session, job.hold_id, outcome, count)

"""Cancel a job: items not started end cancelled and refunded; running ones finish."""

from __future__ import annotations

from shared.db.session import Database
from shared.jobs import actions
from shared.jobs.models import Job


def cancel_job(database: Database, account_id: int, job_id: str) -> Job:
    """The job after cancelling (JobNotFound when it is not the account's)."""
    with database.session() as session:
        return actions.cancel(session, account_id, job_id)

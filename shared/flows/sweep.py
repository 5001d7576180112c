"""The periodic sweep: revive stuck jobs, delete expired ones, refund unsettled credits."""

from __future__ import annotations

import logging
from shared.db.session import Database
from shared.flows.classify import refund_unsettled
from shared.flows.queue import TaskSender, send_chunks
from shared.jobs.sweep import sweep
from shared.settings import Settings

logger = logging.getLogger(__name__)


def sweep_jobs(settings: Settings, database: Database, sender: TaskSender) -> None:
    with database.session() as session:
        chunks, deleted = sweep(session, settings.job_stale_seconds, settings.job_retention_days)
    send_chunks(sender, chunks)
    if chunks or deleted:
        logger.info("job sweep: %d chunks sent again, %d expired jobs deleted", len(chunks), deleted)


def sweep_reservations(database: Database) -> int:
    """Refund the synchronous credits held past their request's deadline and never settled."""
    refunded = refund_unsettled(database)
    if refunded:
        logger.warning("refunded %d reservations that were never settled", refunded)
    return refunded

"""Submit a bulk job: parse the upload whole, store it and hold its credits, send its first chunks."""

from __future__ import annotations

import logging

from shared.db.session import Database
from shared.flows.queue import TaskSender, send_chunks
from shared.jobs.models import Job
from shared.jobs.parsing import parse_job
from shared.jobs.submission import submit
from shared.settings import Settings

logger = logging.getLogger(__name__)


def submit_job(
    database: Database,
    settings: Settings,
    sender: TaskSender,
    account_id: int,
    body: bytes,
    content_type: str | None,
    options: dict[str, str],
    idempotency_key: str | None = None,
) -> Job:
    """The stored job (or the one the idempotency key already names).

    InvalidJobInput before anything is stored or charged; InsufficientCredits
    leaves nothing behind.
    """
    job_input = parse_job(
        body, content_type, options, settings.max_job_items, settings.max_body_bytes
    )
    job, chunks = submit(
        database,
        account_id,
        job_input,
        idempotency_key=idempotency_key,
        chunk_size=settings.job_chunk_size,
        chunks_in_flight=settings.job_chunks_in_flight,
        deadline_seconds=settings.job_deadline_seconds,
    )
    try:
        send_chunks(sender, chunks)
    except Exception:
        # The job is stored and its credits held: the sweep sends its chunks later.
        logger.exception("job %s: chunks not sent; the sweep will send them", job.id)
    return job

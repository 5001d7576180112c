"""Celery tasks: thin wrappers that call the services."""

from __future__ import annotations

import logging

from celery.signals import worker_process_init

from shared.classification.models import ClassificationRequest, Outcome
from shared.classification.service import classify_and_settle
from worker import runtime
from worker.celery_app import INTERACTIVE_QUEUE, app

logger = logging.getLogger(__name__)


@app.task(name="taxonomist.classify", queue=INTERACTIVE_QUEUE)
def classify(request: dict, reservation_id: str, reply_key: str) -> None:
    # Arguments carry the product text: Flower is told to hide them (see docs).
    current = runtime.current()
    try:
        outcome = classify_and_settle(
            current.classifier,
            current.database,
            ClassificationRequest.from_dict(request),
            reservation_id,
        )
    except Exception:
        # The credit could not be settled (the database away): the client gets
        # its 500 now rather than at its deadline, and the reservation, still
        # open, is refunded by the stale sweep.
        logger.exception("could not settle reservation %s; answering 500", reservation_id)
        outcome = Outcome(status=500)
    current.replies.publish(reply_key, outcome.to_dict())


@worker_process_init.connect
def _load_before_first_task(**_) -> None:
    # Load the indexes when a pool process starts, not on a client's first request.
    runtime.current()

"""Celery tasks: thin wrappers that call the services."""

from __future__ import annotations

from celery.signals import worker_process_init

from shared.classification.models import ClassificationRequest
from shared.classification.service import classify_and_settle
from worker import runtime
from worker.celery_app import INTERACTIVE_QUEUE, app


@app.task(name="taxonomist.classify", queue=INTERACTIVE_QUEUE)
def classify(request: dict, reservation_id: str, reply_key: str) -> None:
    # Arguments carry the product text: Flower is told to hide them (see docs).
    current = runtime.current()
    outcome = classify_and_settle(
        current.classifier,
        current.database,
        ClassificationRequest.from_dict(request),
        reservation_id,
    )
    current.replies.publish(reply_key, outcome.to_dict())


@worker_process_init.connect
def _load_before_first_task(**_) -> None:
    # Load the indexes when a pool process starts, not on a client's first request.
    runtime.current()

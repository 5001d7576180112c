"""Celery tasks: thin wrappers that call the services."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_init, worker_process_init

from shared.classification.models import ClassificationRequest
from shared.classification.service import classify_and_settle
from worker import runtime
from worker.celery_app import CLASSIFY_TASK


@shared_task(name=CLASSIFY_TASK)
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


@worker_init.connect
def _use_the_worker_settings(sender, **_) -> None:
    # Before the pool forks: its processes build their runtime from these.
    runtime.configure(sender.app.settings)


@worker_process_init.connect
def _load_before_first_task(**_) -> None:
    # Load the indexes when a pool process starts, not on a client's first request.
    runtime.current()

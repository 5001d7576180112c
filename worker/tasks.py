"""Celery tasks of the interactive queue: they translate messages to the classify use case and back."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_init, worker_process_init

from shared.classification.models import ClassificationRequest
from shared.flows.classify import perform
from shared.flows.outcomes import Outcome, to_message
from shared.flows.queue import CLASSIFY_TASK
from worker import runtime

logger = logging.getLogger(__name__)


@shared_task(name=CLASSIFY_TASK)
def classify(request: dict, reservation_id: str, reply_key: str, with_candidates: bool = False) -> None:
    # Arguments carry the product text: Flower is told to hide them (see docs).
    current = runtime.current()

    def answer(outcome: Outcome) -> bool:
        return current.replies.publish(reply_key, to_message(outcome))

    try:
        perform(
            current.classifier,
            current.database,
            ClassificationRequest.from_dict(request),
            reservation_id,
            answer,
            with_candidates,
        )
    except Exception:
        # The credit could not be settled (the database away): the client has
        # its answer already, and the reservation, still open, cannot be
        # consumed after its deadline and is refunded by the stale sweep.
        logger.exception("could not settle reservation %s", reservation_id)


@worker_init.connect
def _use_the_worker_settings(sender, **_) -> None:
    # Before the pool forks: its processes build their runtime from these.
    runtime.configure(sender.app.settings)


@worker_process_init.connect
def _load_before_first_task(**_) -> None:
    # Load the indexes when a pool process starts, not on a client's first request.
    runtime.current()

"""Task events cost the worker a Redis PUBLISH each, so a worker sends them only
once a monitor asks: Flower sends `enable_events` when it starts and every 5 s."""

from __future__ import annotations

import httpx

from shared.settings import Settings
from tests.conftest import Stack
from worker.celery_app import make_celery

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = {"product": "Stainless steel chef knife, 8 inch", "fallbackToBestGuess": True}
REPLY_SECONDS = 10


def test_a_worker_sends_task_events_once_a_monitor_asks(production: Stack):
    customer = production.customer()
    # An answered request: the worker consumes, so it also hears broadcasts.
    answered = httpx.post(production.url + ENDPOINT, json=PRODUCT, headers=customer.headers, timeout=60)
    assert answered.status_code == 200, answered.text
    app = make_celery(Settings.from_environ(production.env))
    try:
        first = app.control.enable_events(reply=True, timeout=REPLY_SECONDS)
        again = app.control.enable_events(reply=True, timeout=REPLY_SECONDS)
    finally:
        app.close()
    assert [reply["ok"] for answer in first for reply in answer.values()] == ["task events enabled"]
    assert [reply["ok"] for answer in again for reply in answer.values()] == ["task events already enabled"]

"""Refund reservations that nobody settled: a front or worker that crashed mid-request.

Every front runs it; settlement is a compare-and-set, so two fronts sweeping
the same reservation refund it once.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from api.context import ApiContext
from shared.flows.sweep import sweep_reservations

SWEEP_INTERVAL_SECONDS = 60.0

logger = logging.getLogger(__name__)


async def sweep_forever(context: ApiContext, interval: float = SWEEP_INTERVAL_SECONDS) -> None:
    while True:
        try:
            await run_in_threadpool(sweep_reservations, context.settings, context.database)
        except Exception:
            logger.exception("stale reservation sweep failed; will try again")
        await asyncio.sleep(interval)

"""Refund credit holds that nobody settled in time: a front or worker that crashed mid-request.

Every front runs it; settlement is a compare-and-set, so two fronts sweeping
the same hold refund it once.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from api.context import ApiContext
from shared.credits import service as credits

SWEEP_INTERVAL_SECONDS = 60.0

logger = logging.getLogger(__name__)


async def sweep_forever(context: ApiContext, interval: float = SWEEP_INTERVAL_SECONDS) -> None:
    while True:
        try:
            refunded = await run_in_threadpool(sweep_once, context)
            if refunded:
                logger.warning("refunded %d credit holds that were never settled", refunded)
        except Exception:
            logger.exception("stale credit hold sweep failed; will try again")
        await asyncio.sleep(interval)


def sweep_once(context: ApiContext) -> int:
    with context.database.session() as session:
        return credits.expire_stale(session)

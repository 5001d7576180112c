"""What the front holds for its lifetime: settings, database, limiter, reply channel, task sender.

It is the `shared.flows.ports.Front` the front's use cases run with.
"""

from __future__ import annotations

from dataclasses import dataclass

from celery import Celery

from shared.accounts.service import RateLimits
from shared.db.session import Database
from shared.ratelimit.accounts import InProcessAccountLimiter, RedisAccountLimiter
from shared.settings import Settings
from worker.replies import InProcessReplies, RedisReplies


@dataclass
class ApiContext:
    settings: Settings
    database: Database
    limiter: RedisAccountLimiter | InProcessAccountLimiter
    replies: RedisReplies | InProcessReplies
    # The Celery app built from `settings`: tasks are sent through it by name.
    tasks: Celery
    taxonomy_versions: dict[str, str]

    @property
    def default_limits(self) -> RateLimits:
        return RateLimits(
            per_minute=self.settings.default_per_minute,
            per_hour=self.settings.default_per_hour,
            per_day=self.settings.default_per_day,
        )

    def new_reply_key(self) -> str:
        return self.replies.new_key()

    async def close(self) -> None:
        self.limiter.close()
        await self.replies.close()
        self.database.dispose()

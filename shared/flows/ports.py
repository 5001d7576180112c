"""What the front-side use cases need from the process that runs them (the API's context)."""

from __future__ import annotations

from typing import Protocol

from shared.accounts.service import RateLimits
from shared.db.session import Database
from shared.flows.queue import TaskSender
from shared.settings import Settings


class AccountLimiter(Protocol):
    def hit(self, account_id: int, limits: RateLimits) -> float | None: ...


class Replies(Protocol):
    """The channel a worker answers a waiting front on (worker.replies)."""

    async def expect(self, key: str) -> None: ...

    async def wait(self, key: str) -> dict: ...

    def forget(self, key: str) -> None: ...


class Front(Protocol):
    @property
    def settings(self) -> Settings: ...

    @property
    def database(self) -> Database: ...

    @property
    def limiter(self) -> AccountLimiter: ...

    @property
    def replies(self) -> Replies: ...

    @property
    def tasks(self) -> TaskSender: ...

    @property
    def default_limits(self) -> RateLimits: ...

    def new_reply_key(self) -> str: ...

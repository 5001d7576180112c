"""Who is calling, and may they now: the first two steps of every account's request."""

from __future__ import annotations

from shared.accounts import service as accounts
from shared.accounts.models import Account
from shared.db.session import Database
from shared.flows.outcomes import RateLimited
from shared.flows.ports import Front


def authenticate(database: Database, authorization: str | None) -> Account:
    """The account whose API key the header carries (InvalidApiKey when none)."""
    with database.session() as session:
        account, key = accounts.authenticate(session, authorization)
        accounts.touch_key(session, key)
        return account


async def within_limit(front: Front, account: Account) -> RateLimited | None:
    """Count one request of the account: None when allowed, else how long to wait."""
    wait = await front.limiter.hit(account.id, accounts.rate_limits(account, front.default_limits))
    return None if wait is None else RateLimited(wait)

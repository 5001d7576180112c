"""Who is calling, and may they now: the first two steps of every account's request.

Both run in the caller's database transaction, in one thread: the front's
classification holds its credit in the same transaction (shared.flows.classify).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from shared.accounts import service as accounts
from shared.accounts.service import KeyHolder, OwnLimits
from shared.flows.outcomes import RateLimited
from shared.flows.ports import Front


def admit(session: Session, front: Front, authorization: str | None) -> KeyHolder | RateLimited:
    """The account whose API key the header carries, counted against its limits.

    InvalidApiKey when the key is unknown or revoked (the database is asked
    every time); RateLimited, and the request not counted, when over a limit.
    """
    holder = accounts.authenticate(session, authorization)
    accounts.touch_key(session, holder)
    return within_limit(front, holder.account_id, holder) or holder


def admit_alone(front: Front, authorization: str | None) -> KeyHolder | RateLimited:
    """`admit` in a transaction of its own: for routes that hold nothing."""
    with front.database.session() as session:
        return admit(session, front, authorization)


def within_limit(front: Front, account_id: int, own: OwnLimits) -> RateLimited | None:
    """Count one request of the account: None when allowed, else how long to wait."""
    wait = front.limiter.hit(account_id, accounts.rate_limits(own, front.default_limits))
    return None if wait is None else RateLimited(wait)

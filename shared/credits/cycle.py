"""Billing cycles: whole months from the moment the balance was opened.

Every boundary is computed from that anchor, never from the previous one: a
balance opened on January 31 renews on February 28, March 31, April 30,
where chaining "a month after the last renewal" would drift to the 28th.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from dateutil.relativedelta import relativedelta

# Shorter than any cycle (28 days at least).
_LESS_THAN_A_CYCLE = timedelta(days=1)


def boundary(opened_at: datetime, cycles: int) -> datetime:
    """The start of cycle number `cycles` (0 is the opening), clamped to the month's last day."""
    return opened_at + relativedelta(months=cycles)


def cycle_index(opened_at: datetime, moment: datetime) -> int:
    """The number of the cycle `moment` falls in (0 before the first renewal)."""
    months = (moment.year - opened_at.year) * 12 + moment.month - opened_at.month
    # The month difference is exact or one too many (the day of the month is not reached yet).
    return months if boundary(opened_at, months) <= moment else months - 1


def next_renewal(opened_at: datetime, moment: datetime) -> datetime:
    """The first boundary after `moment`."""
    return boundary(opened_at, cycle_index(opened_at, moment) + 1)


def cycle_start(opened_at: datetime, renews_at: datetime) -> datetime:
    """The start of the cycle that ends at `renews_at`: the last boundary before it.

    Looked up a day earlier, so that a `renews_at` a moment off the anchor's
    boundaries (one set before balances had an anchor) still finds its cycle.
    """
    return boundary(opened_at, cycle_index(opened_at, renews_at - _LESS_THAN_A_CYCLE))

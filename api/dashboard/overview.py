"""The overview: balances, this cycle's usage and the daily usage chart."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from api.context import ApiContext
from api.dashboard.account import signin_page
from api.dashboard.chart import CHART_HEIGHT, CHART_WIDTH, usage_bars
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in, signed_in_account_id
from shared.accounts.models import Account
from shared.credits import service as credits
from shared.credits import usage


async def home(request: Request) -> Response:
    """/dashboard: the overview when signed in, the sign-in page otherwise."""
    if signed_in_account_id(request) is None:
        return await signin_page(request)
    return await _overview(request)


@signed_in
async def _overview(request: Request, account: Account) -> Response:
    balance, cycle_used, days = await run_in_threadpool(
        _usage, context_of(request), account.id
    )
    return render(
        request,
        "overview.html",
        account=account,
        balance=balance,
        cycle_used=cycle_used,
        days=days,
        bars=usage_bars(days),
        chart_width=CHART_WIDTH,
        chart_height=CHART_HEIGHT,
    )


def _usage(context: ApiContext, account_id: int):
    with context.database.session() as session:
        balance = credits.show(session, account_id)
        return (
            balance,
            usage.cycle_usage(session, account_id, balance.renews_at),
            usage.daily_usage(session, account_id),
        )

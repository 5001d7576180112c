"""Billing: the plan's allowance, top-up credits, and the ledger of grants and top-ups.

Payment is out of scope: an operator grants top-ups with `taxonomist credits topup`.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from api.context import ApiContext
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in
from shared.accounts.models import Account
from shared.credits import service as credits
from shared.credits import usage


@signed_in
async def billing_page(request: Request, account: Account) -> Response:
    balance, entries = await run_in_threadpool(_billing, context_of(request), account.id)
    return render(request, "billing.html", account=account, balance=balance, entries=entries)


def _billing(context: ApiContext, account_id: int):
    with context.database.session() as session:
        return credits.show(session, account_id), usage.credit_entries(session, account_id)

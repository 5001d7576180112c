"""Bulk jobs: until the jobs service lands, the page points to the API and the CLI."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from api.dashboard.rendering import render
from api.dashboard.sessions import signed_in
from shared.accounts.models import Account


@signed_in
async def jobs_page(request: Request, account: Account) -> Response:
    return render(request, "jobs.html", account=account)

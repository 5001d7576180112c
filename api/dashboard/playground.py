"""The playground: one classification through the API's own pipeline, paid with a credit.

The form's fields become the JSON body the API would receive; it is checked
in the API's order (rate limit, size, fields, credits) by the API's own
validation, then sent to the worker by the API's own function.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from datetime import timedelta

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from api import errors
from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in
from api.routes.classify import run_classification
from shared.classification.validation import classification_request_from
from shared.validation import InvalidRequest
from shared.accounts import service as accounts
from shared.accounts.models import Account
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    DEFAULT_TAXONOMY,
    TAXONOMY_NAMES,
    Outcome,
)
from shared.credits import service as credits
from shared.credits.errors import InsufficientCredits

CATEGORIZE_PATH = "/api/v1/products/categorize"
# How the readable card is marked, by the response's confidenceLevel.
MARKS = {CONFIDENCE_AI: "green", CONFIDENCE_FALLBACK: "yellow"}
NO_CATEGORY_MARK = "black"


@dataclass(frozen=True, slots=True)
class PlaygroundForm:
    product: str = ""
    taxonomy: str = DEFAULT_TAXONOMY
    custom_instructions: str = ""
    leafs_only: bool = False
    fallback_to_best_guess: bool = False

    @classmethod
    def from_form(cls, form: FormData) -> "PlaygroundForm":
        return cls(
            product=str(form.get("product", "")),
            taxonomy=str(form.get("taxonomy", DEFAULT_TAXONOMY)),
            custom_instructions=str(form.get("customInstructionsForAi", "")),
            leafs_only="leafsOnly" in form,
            fallback_to_best_guess="fallbackToBestGuess" in form,
        )

    def request_body(self) -> dict:
        """The JSON body an API client would send; an empty instructions box is null."""
        return {
            "product": self.product,
            "taxonomy": self.taxonomy,
            "customInstructionsForAi": self.custom_instructions.strip() or None,
            "leafsOnly": self.leafs_only,
            "fallbackToBestGuess": self.fallback_to_best_guess,
        }


@signed_in
async def playground_page(request: Request, account: Account) -> Response:
    return await _render(request, account, PlaygroundForm())


@signed_in
async def run(request: Request, account: Account) -> Response:
    fields = PlaygroundForm.from_form(await checked_form(request))
    context = context_of(request)
    body = fields.request_body()
    wait = await context.limiter.hit(account.id, accounts.rate_limits(account, context.default_limits))
    if wait is not None:
        return await _render(request, account, fields, error=f"{errors.RATE_LIMITED} Try again in {wait:.0f} s.")
    if len(json.dumps(body).encode()) > context.settings.max_body_bytes:
        return await _render(request, account, fields, error=errors.TOO_LARGE)
    try:
        classification = classification_request_from(body)
    except InvalidRequest as exc:
        return await _render(request, account, fields, error=str(exc))
    try:
        reservation_id = await run_in_threadpool(_reserve, context, account.id)
    except InsufficientCredits:
        return await _render(request, account, fields, error=errors.INSUFFICIENT_CREDITS)
    outcome = await run_classification(context, classification, reservation_id)
    return await _render(
        request, account, fields, outcome=outcome, curl=curl_command(request, body)
    )


def curl_command(request: Request, body: dict) -> str:
    url = str(request.base_url).rstrip("/") + CATEGORIZE_PATH
    return " \\\n  ".join(
        [
            f"curl -X POST {shlex.quote(url)}",
            '-H "Authorization: Bearer $TAXONOMIST_API_KEY"',
            "-H 'Content-Type: application/json'",
            f"-d {shlex.quote(json.dumps(body, ensure_ascii=False))}",
        ]
    )


def mark(outcome: Outcome) -> str:
    return MARKS.get((outcome.body or {}).get("confidenceLevel"), NO_CATEGORY_MARK)


def failure(outcome: Outcome) -> str | None:
    """The API's message for a classification that was not carried out (it was refunded)."""
    if outcome.status == 200:
        return None
    return errors.RATE_LIMITED if outcome.status == 429 else errors.INTERNAL_ERROR


async def _render(
    request: Request, account: Account, fields: PlaygroundForm, **values
) -> Response:
    balance = await run_in_threadpool(_balance, context_of(request), account.id)
    outcome: Outcome | None = values.get("outcome")
    return render(
        request,
        "playground.html",
        account=account,
        fields=fields,
        taxonomies=TAXONOMY_NAMES,
        balance=balance,
        mark=mark(outcome) if outcome else None,
        failure=failure(outcome) if outcome else None,
        response_json=json.dumps(outcome.body, indent=2) if outcome and outcome.body else None,
        status_code=400 if "error" in values else 200,
        **values,
    )


def _reserve(context: ApiContext, account_id: int) -> str:
    with context.database.session() as session:
        ttl = timedelta(seconds=context.settings.reservation_ttl_seconds)
        return credits.hold(session, account_id, expires_in=ttl).id


def _balance(context: ApiContext, account_id: int) -> credits.BalanceView:
    with context.database.session() as session:
        return credits.show(session, account_id)

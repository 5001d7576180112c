"""The playground: the API's classify use case, paid with a credit, plus the candidates.

The form's fields become the JSON body the API would receive; the account's
rate limit is counted as for the API, then the body goes through the same
use case (size, fields, credits, the classification).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from api import errors
from api.context import ApiContext
from api.dashboard.csrf import checked_form
from api.dashboard.rendering import render
from api.dashboard.sessions import context_of, signed_in
from shared.accounts.models import Account
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    DEFAULT_TAXONOMY,
    TAXONOMY_NAMES,
)
from shared.credits import service as credits
from shared.credits.errors import InsufficientCredits
from shared.flows.admission import within_limit
from shared.flows.classify import classify
from shared.flows.outcomes import Classified, Outcome, RateLimited
from shared.validation import BodyTooLarge, InvalidRequest

CATEGORIZE_PATH = "/api/v1/products/categorize"
# How the readable card is marked, by the response's confidenceLevel.
MARKS: dict[str | None, str] = {CONFIDENCE_AI: "green", CONFIDENCE_FALLBACK: "yellow"}
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
    limited = await run_in_threadpool(within_limit, context_of(request), account.id, account)
    if limited is not None:
        return await _render(request, account, fields, error=_wait_message(limited))
    body = fields.request_body()
    try:
        # ASCII JSON: a lone surrogate from the form reaches the validation's 400, never an encoding error.
        outcome = await classify(
            context_of(request), account.id, json.dumps(body).encode(), with_candidates=True
        )
    except BodyTooLarge:
        return await _render(request, account, fields, error=errors.TOO_LARGE)
    except InvalidRequest as exc:
        return await _render(request, account, fields, error=str(exc))
    except InsufficientCredits:
        return await _render(request, account, fields, error=errors.INSUFFICIENT_CREDITS)
    return await _render(
        request, account, fields, outcome=outcome, curl=curl_command(request, body)
    )


def _wait_message(limited: RateLimited) -> str:
    return f"{errors.RATE_LIMITED} Try again in {limited.retry_after:.0f} s."


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


def mark(result: Classified) -> str:
    return MARKS.get(result.response.get("confidenceLevel"), NO_CATEGORY_MARK)


def failure(outcome: Outcome) -> str | None:
    """The API's message for a classification that was not carried out (it was refunded)."""
    if isinstance(outcome, Classified):
        return None
    return errors.RATE_LIMITED if isinstance(outcome, RateLimited) else errors.INTERNAL_ERROR


async def _render(
    request: Request, account: Account, fields: PlaygroundForm, **values
) -> Response:
    balance = await run_in_threadpool(_balance, context_of(request), account.id)
    outcome: Outcome | None = values.pop("outcome", None)
    result = outcome if isinstance(outcome, Classified) else None
    return render(
        request,
        "playground.html",
        account=account,
        fields=fields,
        taxonomies=TAXONOMY_NAMES,
        balance=balance,
        result=result,
        mark=mark(result) if result else None,
        failure=failure(outcome) if outcome else None,
        response_json=json.dumps(result.response, indent=2) if result else None,
        status_code=400 if "error" in values else 200,
        **values,
    )


def _balance(context: ApiContext, account_id: int) -> credits.BalanceView:
    with context.database.session() as session:
        return credits.show(session, account_id)

"""How a classification ended, as the use case says it; `api` alone turns it into HTTP.

It crosses the queue from worker to front as a message naming its kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KIND_CLASSIFIED = "classified"
KIND_RATE_LIMITED = "rate_limited"
KIND_FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Classified:
    """Done and paid: the API's response fields, and the candidates when they were asked for."""

    response: dict
    # Each is {"id", "path", "score"}; for the dashboard's playground, never in the API's reply.
    candidates: list[dict] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RateLimited:
    """Nothing was done or charged; try again after `retry_after` seconds."""

    retry_after: float


@dataclass(frozen=True, slots=True)
class Failed:
    """Nothing was done or charged: something broke on the way."""


Outcome = Classified | RateLimited | Failed


def to_message(outcome: Outcome) -> dict:
    if isinstance(outcome, Classified):
        return {"kind": KIND_CLASSIFIED, "response": outcome.response, "candidates": outcome.candidates}
    if isinstance(outcome, RateLimited):
        return {"kind": KIND_RATE_LIMITED, "retryAfter": outcome.retry_after}
    return {"kind": KIND_FAILED}


def from_message(message: dict) -> Outcome:
    kind = message.get("kind")
    if kind == KIND_CLASSIFIED:
        return Classified(message["response"], message.get("candidates", []))
    if kind == KIND_RATE_LIMITED:
        return RateLimited(message["retryAfter"])
    return Failed()

"""What a selector is given and what it answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from shared.taxonomy.models import Candidate


@dataclass(frozen=True, slots=True)
class Decision:
    """A selector's choice: one of the candidates' ids, or None to decline.

    `invalid`: the answer was neither a candidate nor an explicit decline;
    `truncated`: it was cut off at the answer-token limit (read all the same).
    """

    category_id: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    invalid: bool = False
    truncated: bool = False


class Selector(Protocol):
    def select(
        self,
        product: str,
        candidates: Sequence[Candidate],
        custom_instructions: str | None,
    ) -> Decision: ...


class CallSlots(Protocol):
    """A cap on the upstream AI's calls in flight (AI_MAX_CONCURRENCY); the
    fleet's and the embedded one are in shared.ratelimit.concurrency."""

    def acquire(self, max_wait: float) -> str | None:
        """A lease on a slot, or None when none freed within `max_wait` seconds."""

    def release(self, lease: str) -> None: ...

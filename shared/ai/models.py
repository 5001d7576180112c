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

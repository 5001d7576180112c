"""A classification request and its result, in the words of the API contract."""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.taxonomy.models import Candidate, Category

CONFIDENCE_AI = "AI"
CONFIDENCE_FALLBACK = "RelevantCategory"
CONFIDENCE_NONE = "None"

TAXONOMY_NAMES = ("Google", "Shopify")
DEFAULT_TAXONOMY = "Google"


@dataclass(frozen=True, slots=True)
class ClassificationRequest:
    product: str
    taxonomy: str = DEFAULT_TAXONOMY
    custom_instructions: str | None = None
    leafs_only: bool = False
    fallback_to_best_guess: bool = False

    def to_dict(self) -> dict:
        return {
            "product": self.product,
            "taxonomy": self.taxonomy,
            "customInstructionsForAi": self.custom_instructions,
            "leafsOnly": self.leafs_only,
            "fallbackToBestGuess": self.fallback_to_best_guess,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "ClassificationRequest":
        return cls(
            product=data["product"],
            taxonomy=data.get("taxonomy", DEFAULT_TAXONOMY),
            custom_instructions=data.get("customInstructionsForAi"),
            leafs_only=data.get("leafsOnly", False),
            fallback_to_best_guess=data.get("fallbackToBestGuess", False),
        )


@dataclass(frozen=True, slots=True)
class ClassificationResult:
    category: Category | None
    confidence: str
    candidates: list[Candidate] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # The selector's answer was neither a candidate nor a decline / was cut
    # off at its token limit (shared.ai.models.Decision); for the figures.
    invalid_answer: bool = False
    truncated_answer: bool = False

    def to_response(self) -> dict:
        """The 200 body of the contract (section 2.2), exactly its fields."""
        category = self.category
        return {
            "success": True,
            "categoryFound": category is not None,
            "categoryId": category.id if category else None,
            "categoryPath": category.path if category else None,
            "categoryLine": category.line if category else None,
            "categoryTags": category.tags if category else [],
            "confidenceLevel": self.confidence,
        }

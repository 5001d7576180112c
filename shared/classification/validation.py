"""Strict validation of a classification request body (contract section 2.1)."""

from __future__ import annotations

from shared.classification.models import (
    DEFAULT_TAXONOMY,
    TAXONOMY_NAMES,
    ClassificationRequest,
)
from shared.validation import InvalidRequest, check_text, parse_json

_ALLOWED_TAXONOMIES = " or ".join(f'"{name}"' for name in TAXONOMY_NAMES)


def parse_json_object(body: bytes) -> dict:
    data = parse_json(body)
    if not isinstance(data, dict):
        raise InvalidRequest("The request body must be a JSON object.")
    return data


def parse_classification_request(body: bytes) -> ClassificationRequest:
    return classification_request_from(parse_json_object(body))


def classification_request_from(data: dict) -> ClassificationRequest:
    """Unknown fields are ignored; an omitted optional field takes its default."""
    return ClassificationRequest(
        product=_product(data),
        taxonomy=_taxonomy(data),
        custom_instructions=_optional_string(data, "customInstructionsForAi"),
        leafs_only=_boolean(data, "leafsOnly"),
        fallback_to_best_guess=_boolean(data, "fallbackToBestGuess"),
    )


def _product(data: dict) -> str:
    if "product" not in data:
        raise InvalidRequest("Field 'product' is required.")
    product = data["product"]
    if not isinstance(product, str):
        raise InvalidRequest("Field 'product' must be a string.")
    if not product.strip():
        raise InvalidRequest("Field 'product' must not be empty.")
    return check_text("Field 'product'", product)


def _taxonomy(data: dict) -> str:
    taxonomy = data.get("taxonomy", DEFAULT_TAXONOMY)
    if not isinstance(taxonomy, str) or taxonomy not in TAXONOMY_NAMES:
        raise InvalidRequest(f"Field 'taxonomy' must be {_ALLOWED_TAXONOMIES}.")
    return taxonomy


def _boolean(data: dict, field: str) -> bool:
    value = data.get(field, False)
    if not isinstance(value, bool):
        raise InvalidRequest(f"Field '{field}' must be a boolean (true or false).")
    return value


def _optional_string(data: dict, field: str) -> str | None:
    value = data.get(field)
    if value is not None and not isinstance(value, str):
        raise InvalidRequest(f"Field '{field}' must be a string or null.")
    return value if value is None else check_text(f"Field '{field}'", value)

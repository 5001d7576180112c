"""From a product listing to the weighted terms searched for.

The title (first line) names the product; the description mostly describes
it (materials, sizes, shipping), so its terms count less and only its
beginning is read.
"""

from __future__ import annotations

from collections import Counter

from shared.taxonomy.text import terms

TITLE_WEIGHT = 1.0
DESCRIPTION_WEIGHT = 0.3
DESCRIPTION_MAX_TERMS = 100


def split_listing(product: str) -> tuple[str, str]:
    title, _, description = product.strip().partition("\n")
    return title, description


def query_terms(product: str) -> dict[str, float]:
    title, description = split_listing(product)
    weights: Counter[str] = Counter()
    for term in terms(title):
        weights[term] += TITLE_WEIGHT
    for term in terms(description)[:DESCRIPTION_MAX_TERMS]:
        weights[term] += DESCRIPTION_WEIGHT
    return dict(weights)

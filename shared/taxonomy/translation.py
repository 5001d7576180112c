"""Product words of other languages to the English words of category names.

Shopify's category names come translated into 30 languages, with the same
ids: an aligned corpus. A foreign word that keeps appearing in the
translations of the categories whose English names hold an English word
(Spanish "cama" and "bed") translates it. Translated names are already
aliases of their categories; the table adds the other direction, so a
Spanish listing's words also match English names and the name coverage.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from shared.taxonomy.text import terms

# Latin-script languages whose listings appear in the stores measured and
# whose words the lexical side reads; the other scripts' tables were not measured.
TRANSLATED_LANGUAGES = ("es", "cs", "de", "fr", "it", "pt-BR", "pt-PT", "nl", "pl", "sk-SK")
# Dice coefficient (over category and language pairs) a word pair needs, and
# how often it must be seen: below 0.4, pairs like "vivo" / "live" creep in.
MIN_DICE = 0.4
MIN_PAIRS = 2
# English words kept per foreign word.
MAX_TRANSLATIONS = 2


@dataclass(frozen=True)
class Translations:
    """For each foreign term, its English terms, the most associated first."""

    table: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(
        cls, english_names: Mapping[str, str], localized: Mapping[str, Mapping[str, str]]
    ) -> "Translations":
        """From English names by category id and, per language, translated names by id.

        Foreign words that are also English name words are not translated:
        they already match.
        """
        pairs, foreign_count, english_count = _aligned_counts(english_names, localized)
        table: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for (foreign, word), count in pairs.items():
            dice = 2 * count / (foreign_count[foreign] + english_count[word])
            if count >= MIN_PAIRS and dice >= MIN_DICE:
                table[foreign].append((word, dice))
        return cls(
            {
                foreign: tuple(
                    word for word, _ in sorted(words, key=lambda pair: (-pair[1], pair[0]))
                )[:MAX_TRANSLATIONS]
                for foreign, words in sorted(table.items())
            }
        )

    def english_terms(self, query: Mapping[str, float], weight: float) -> dict[str, float]:
        """English terms for a query's foreign ones, at `weight` x the foreign term's weight."""
        translated: Counter[str] = Counter()
        for term, term_weight in query.items():
            for word in self.table.get(term, ()):
                translated[word] += weight * term_weight
        return dict(translated)

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        rows = [(foreign, word) for foreign, words in self.table.items() for word in words]
        return {
            f"{prefix}foreign": np.array([foreign for foreign, _ in rows], dtype=str),
            f"{prefix}english": np.array([word for _, word in rows], dtype=str),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> "Translations":
        table: dict[str, tuple[str, ...]] = defaultdict(tuple)
        for foreign, word in zip(
            arrays[f"{prefix}foreign"].tolist(), arrays[f"{prefix}english"].tolist()
        ):
            table[foreign] += (word,)
        return cls(dict(table))


def _aligned_counts(
    english_names: Mapping[str, str], localized: Mapping[str, Mapping[str, str]]
) -> tuple[Counter[tuple[str, str]], Counter[str], Counter[str]]:
    """How often each (foreign, English) term pair, foreign term and English term
    occur over the (category, translated language) pairs."""
    english = {category_id: set(terms(name)) for category_id, name in english_names.items()}
    english_vocabulary = set().union(*english.values()) if english else set()
    pairs: Counter[tuple[str, str]] = Counter()
    foreign_count: Counter[str] = Counter()
    english_count: Counter[str] = Counter()
    for language in TRANSLATED_LANGUAGES:
        for category_id, name in localized.get(language, {}).items():
            english_terms = english.get(category_id, set())
            foreign_terms = set(terms(name)) - english_vocabulary
            english_count.update(english_terms)
            foreign_count.update(foreign_terms)
            pairs.update((f, e) for f in foreign_terms for e in english_terms)
    return pairs, foreign_count, english_count

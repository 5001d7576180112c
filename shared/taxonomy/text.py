"""Turn messy product text and category names into comparable terms.

The same `terms()` runs over category names when the index is built and over
product descriptions at query time, so both sides agree on every rule.
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata

import Stemmer

# Listings arrive with entities escaped once or twice (`&amp;quot;`).
UNESCAPE_ROUNDS = 2
TAG = re.compile(r"<[^>]+>")
# Letters only: sizes, SKUs and part numbers name no category.
WORD = re.compile(r"[a-z]+")
MIN_TERM_LENGTH = 2
# Function words of the languages the listings come in (English, Spanish,
# Czech, and a few more); stemming leaves them intact so they are dropped here.
STOPWORDS = frozenset(
    """
    a an and are as at be by for from in into is it its of on or our the this that
    to with without your you we all any other others more most new per set sets
    de del la las el los en y o para con por un una unos unas al lo su sus que se
    es le les des du et pour avec der die das und mit fur von zu im
    na ve pro se do od za po ze ke ku je s v z k o i a
    """.split()
)

# A PyStemmer object must not be shared between threads; each gets its own.
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def clean(text: str) -> str:
    """Lower-case, entity-free, tag-free, accent-free text."""
    for _ in range(UNESCAPE_ROUNDS):
        text = html.unescape(text)
    text = TAG.sub(" ", text)
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def terms(text: str) -> list[str]:
    """Stemmed content words of `text`, in order, repeats kept."""
    words = [
        word
        for word in WORD.findall(clean(text))
        if len(word) >= MIN_TERM_LENGTH and word not in STOPWORDS
    ]
    return _stemmer().stemWords(words)

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
# Scripts written without spaces between words (Japanese, Chinese, Thai) and
# Korean, whose words carry their particles: read as overlapping pairs of
# characters, so 炊飯器 (rice cooker) matches Shopify's 炊飯器・蒸し器.
UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\uac00-\ud7af"
# Letters only: sizes, SKUs and part numbers name no category. Each run of one
# script is a word: Latin (accents folded), Cyrillic, Greek, Hebrew, Arabic,
# or a run of an unspaced script.
WORD = re.compile(
    rf"(?P<latin>[a-z]+)|(?P<cyrillic>[\u0400-\u0481\u048a-\u04ff]+)|(?P<greek>[\u0370-\u03ff]+)"
    rf"|(?P<hebrew>[\u05d0-\u05ea]+)|(?P<arabic>[\u0620-\u064a\u066e-\u06d3]+)|(?P<unspaced>[{UNSPACED}]+)"
)
STEMMER_BY_SCRIPT = {"latin": "english", "cyrillic": "russian", "greek": "greek", "arabic": "arabic"}
MIN_TERM_LENGTH = 2
# Function words of the languages the listings come in (English, Spanish,
# Czech, Ukrainian and Russian, and a few more); stemming leaves them intact
# so they are dropped here.
STOPWORDS = frozenset(
    """
    a an and are as at be by for from in into is it its of on or our the this that
    to with without your you we all any other others more most new per set sets
    de del la las el los en y o para con por un una unos unas al lo su sus que se
    es le les des du et pour avec der die das und mit fur von zu im
    na ve pro se do od za po ze ke ku je s v z k o i a
    для на та від по из от при без або или із зі до
    של עם את
    من في مع على عن
    """.split()
)
# English plurals the stemmer does not join to their singular, among the words
# of category names and listings: "Kitchen Knives" must match a chef knife,
# "Mice & Trackballs" a wireless mouse. Not "feet" (a length in descriptions)
# nor "leaves" (a verb: "leaves hair soft").
IRREGULAR_PLURALS = {
    "knives": "knife", "shelves": "shelf", "scarves": "scarf", "wolves": "wolf", "hooves": "hoof",
    "thieves": "thief", "dwarves": "dwarf", "elves": "elf", "wives": "wife", "loaves": "loaf",
    "teeth": "tooth", "geese": "goose", "mice": "mouse", "cacti": "cactus", "oxen": "ox",
}
# The same at the end of a compound: "bookshelves", "penknives". Only these two:
# by suffix, "mice" would make "pumice" a "pumouse".
COMPOUND_PLURALS = {plural: IRREGULAR_PLURALS[plural] for plural in ("knives", "shelves")}

# "Without" in the listing languages: "Zapatillas sin cordones" are shoes, not
# laces; the next content word is what the product lacks, and is dropped.
NEGATIONS = frozenset("without sin sem sans ohne senza zonder bez без".split())
# Articles after "without" that are no stop words elsewhere ("ohne den Deckel",
# "senza il tappo"): the word they introduce is the one dropped.
NEGATED_ARTICLES = frozenset("den dem einen eine einer il lo gli uno een het".split())
# "Mug without. Lid sold separately": a sentence ends what "without" governs.
SENTENCE_END = re.compile(r"[.!?;:]")

# Combining marks after these letters are accents that listings often omit
# (é, Greek tonos, Hebrew points, Arabic vowel marks): folded away. After
# other letters they are part of the letter (Ukrainian й and ї, the voicing
# marks of Japanese kana) and are kept.
FOLDED_BASES = re.compile(r"[\u0000-\u024f\u0370-\u03ff\u0590-\u06ff]")

# A PyStemmer object must not be shared between threads; each gets its own.
_local = threading.local()


def _stemmer(language: str) -> Stemmer.Stemmer:
    stemmers = _local.__dict__.setdefault("stemmers", {})
    if language not in stemmers:
        stemmers[language] = Stemmer.Stemmer(language)
    return stemmers[language]


def clean(text: str) -> str:
    """Lower-case, entity-free, tag-free, accent-free text."""
    for _ in range(UNESCAPE_ROUNDS):
        text = html.unescape(text)
    text = TAG.sub(" ", text)
    kept: list[str] = []
    base = ""
    for char in unicodedata.normalize("NFKD", text.lower()):
        if not unicodedata.combining(char):
            base = char
        elif FOLDED_BASES.match(base):
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def terms(text: str) -> list[str]:
    """Stemmed content words of `text`, in order, repeats kept."""
    found: list[str] = []
    # The script of a "without" whose object is still to come, or None.
    negated: str | None = None
    cleaned = clean(text)
    previous_end = 0
    for match in WORD.finditer(cleaned):
        script, word = match.lastgroup, match.group()
        if negated and (script != negated or SENTENCE_END.search(cleaned, previous_end, match.start())):
            negated = None
        previous_end = match.end()
        if word in NEGATIONS:
            negated = script
        elif negated and word in NEGATED_ARTICLES:
            continue
        elif script == "unspaced":
            found.extend(_character_pairs(word))
        elif len(word) >= MIN_TERM_LENGTH and word not in STOPWORDS:
            if negated:
                # What the product is without names another product.
                negated = None
                continue
            language = STEMMER_BY_SCRIPT.get(script or "")
            found.append(_stem(word, language) if language else word)
    return found


def _stem(word: str, language: str) -> str:
    if language == "english":
        word = _singular(word)
    stem = _stemmer(language).stemWord(word)
    if language == "english" and _lost_agent_suffix(word, stem):
        return word.removesuffix("s")
    return stem


def _singular(word: str) -> str:
    """The singular of an irregular plural, which the stemmer leaves apart ("knives" -> "knive")."""
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    for plural, singular in COMPOUND_PLURALS.items():
        if word.endswith(plural):
            return word.removesuffix(plural) + singular
    return word


def _lost_agent_suffix(word: str, stem: str) -> bool:
    """Whether the stemmer cut the "-er" of a product's name.

    Snowball cuts it from long words, so the thing would match the act or
    what it acts on: "comforter" = "comfort", "recorder" = "record",
    "windbreaker" = "windbreak", "container" = "contains". (`stem[:-1]`: the
    stemmer also undoubles a final letter, "controller" -> "control".)
    """
    return word.endswith(("er", "ers")) and not stem.endswith("er") and word.startswith(stem[:-1])


def is_latin(term: str) -> bool:
    """Whether a term of `terms()` is a Latin-script word (they are all ASCII; no other script's is)."""
    return term.isascii()


def _character_pairs(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[index : index + 2] for index in range(len(run) - 1)]

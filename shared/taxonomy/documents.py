"""What the index knows about each category: the words that name it.

A category is searched through two fields:
- its *name*: its own English name, plus aliases from the reference data
  beside the taxonomy files (Shopify's translated names, so non-English
  listings match; for Google, the names of the Shopify categories mapped to
  it, which are often more specific than Google's own);
- its *path*: the names of its ancestors, which place it but say less.
Its own English name alone is also kept, to measure how much of it a query
covers, and, with its parent's name, as the text it is embedded from.
"""

from __future__ import annotations

import csv
import gzip
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from shared.taxonomy.files import (
    GOOGLE,
    SHOPIFY_LOCALIZED_DIR,
    SHOPIFY_TO_GOOGLE_FILE,
    parse_shopify_lines,
)
from shared.taxonomy.knowledge.store import Knowledge
from shared.taxonomy.models import PATH_SEPARATOR, Category, Taxonomy
from shared.taxonomy.text import is_latin, terms

# Where a category name joins the names of several kinds of product.
NAME_PARTS = re.compile(r"\s*(?:&|,|\band\b)\s*")
# "Men's": the "s" is no word of the name.
POSSESSIVE = re.compile(r"['\u2019]s\b")
# The category's own English name counts more than any alias.
OWN_NAME_WEIGHT = 2.0
ALIAS_WEIGHT = 1.0


@dataclass(frozen=True)
class CategoryDocument:
    name: dict[str, float]
    path: dict[str, float]
    own_name: dict[str, float]
    # Each kind of product the name joins ("Scarves & Shawls": scarves, shawls).
    kinds: list[dict[str, float]]
    embedding_text: str


def source_files(taxonomy_dir: Path) -> list[Path]:
    """The optional reference files that add aliases, in a stable order."""
    localized = sorted((taxonomy_dir / SHOPIFY_LOCALIZED_DIR).glob("categories.*.txt.gz"))
    mapping = taxonomy_dir / SHOPIFY_TO_GOOGLE_FILE
    return localized + ([mapping] if mapping.is_file() else [])


def build_documents(taxonomy: Taxonomy, taxonomy_dir: Path) -> list[CategoryDocument]:
    """One document per category, in the taxonomy's order."""
    aliases = _aliases(taxonomy, taxonomy_dir)
    children_names: defaultdict[str, set[frozenset[str]]] = defaultdict(set)
    for category in taxonomy.categories.values():
        if category.parent_id:
            children_names[category.parent_id].add(frozenset(terms(category.name)))
    return [
        CategoryDocument(
            name=_name_field(category, aliases.get(category.id, ())),
            path={term: 1.0 for term in terms(" ".join(category.tags[:-1]))},
            own_name={term: 1.0 for term in terms(category.name)},
            kinds=_own_kinds(category, children_names[category.id]),
            embedding_text=" ".join(category.tags[-2:][::-1]),
        )
        for category in taxonomy.categories.values()
    ]


def _own_kinds(category: Category, children_names: set[frozenset[str]]) -> list[dict[str, float]]:
    """The kinds of product a category's name joins, but those a child is named after.

    "Headphones & Headsets" files its headphones under its child "Headphones":
    a pair of headphones covers that child's name, not a kind of its parent's.
    A top-level department ("Home & Garden") joins departments, not kinds of
    product. And a kind that loses a word to the text rules keeps the whole
    name: "Pen & Pencil Sets" would read "pen" ("sets" is a stop word),
    "Gaskets & O-Rings" "ring".
    """
    names = name_kinds(category.name)
    if category.parent_id is None or len(names) < 2 or any(map(_loses_words, names)):
        return []  # the whole name, which the name coverage already measures
    kinds = {frozenset(terms(name)) for name in names}
    return [dict.fromkeys(kind, 1.0) for kind in sorted(kinds, key=sorted) if kind not in children_names]


def _loses_words(name: str) -> bool:
    words = re.findall(r"[^\W\d_]+", POSSESSIVE.sub("", name))
    return len(terms(name)) < len(words)


def name_kinds(name: str) -> list[str]:
    """The kinds of product a category name joins, each named in full.

    "Scarves & Shawls" joins scarves and shawls; a shared word is lent to the
    single-word parts: "Pet Vitamins & Supplements" is pet vitamins and pet
    supplements, "Laser & IPL Hair Removal Devices" laser and IPL hair
    removal devices. A name that joins nothing is its one kind.
    """
    parts = [part.split() for part in NAME_PARTS.split(name) if part.strip()]
    if len(parts) < 2:
        return [name]
    first, last = parts[0], parts[-1]
    if len(first) > 1 and all(len(part) == 1 for part in parts[1:]):
        parts = [first, *([*first[:-1], *part] for part in parts[1:])]
    elif len(last) > 1 and all(len(part) == 1 for part in parts[:-1]):
        parts = [*([*part, *last[1:]] for part in parts[:-1]), last]
    elif any(len(part) > 1 for part in parts):
        # "Medical Needle & Syringe Sets": which words are shared is not clear.
        return [name]
    return [" ".join(part) for part in parts]


def knowledge_document(knowledge: Knowledge | None) -> dict[str, float]:
    """The terms of a category's exemplar titles and product words, with their counts."""
    if knowledge is None:
        return {}
    return _term_counts([*knowledge.titles, *knowledge.terms])


def regional_document(knowledge: Knowledge | None) -> dict[str, float]:
    """The terms of a category's regional names (Latin American Spanish, Brazilian Portuguese)."""
    if knowledge is None:
        return {}
    return _term_counts(knowledge.regional)


def regional_heads_document(knowledge: Knowledge | None) -> dict[str, float]:
    """The head nouns of a category's regional names: their first word ("placas ciegas": placa)."""
    if knowledge is None:
        return {}
    firsts = (terms(name)[:1] for name in knowledge.regional)
    return {first[0]: 1.0 for first in firsts if first and is_latin(first[0])}


def _term_counts(texts: list[str]) -> dict[str, float]:
    return dict(Counter(term for text in texts for term in terms(text)))


def knowledge_terms_document(category: Category, knowledge: Knowledge | None) -> dict[str, float]:
    """The words for the kind of product a category holds: its name and its knowledge's terms.

    Latin-script words only, as in the head and modifier documents: they are
    looked up with a title's head noun, which is always one (query.head_term).
    """
    words = [category.name, *(knowledge.terms if knowledge else [])]
    return {term: 1.0 for text in words for term in terms(text) if is_latin(term)}


def heads_document(category: Category, knowledge: Knowledge | None) -> dict[str, float]:
    """The head nouns of the names a category's products go by: the last word of each phrase.

    "Mouse Pads" and the term "wireless mouse pad" give "pad", not "mouse":
    a title whose head noun is "mouse" is a mouse, not its pad.
    """
    return {phrase[-1]: 1.0 for phrase in _product_phrases(category, knowledge)}


def modifiers_document(category: Category, knowledge: Knowledge | None) -> dict[str, float]:
    """The words that only qualify the names a category's products go by: never a phrase's head.

    "Wine Glass Charms" gives "wine" and "glass": a title whose head noun is
    "glass" is a glass, not the charm that hangs on it. A word that heads
    another of the category's phrases ("wine glasses") is not listed.
    """
    phrases = _product_phrases(category, knowledge)
    heads = {phrase[-1] for phrase in phrases}
    return {word: 1.0 for phrase in phrases for word in phrase[:-1] if word not in heads}


def _product_phrases(category: Category, knowledge: Knowledge | None) -> list[list[str]]:
    """The terms of each part of the category's name and of each of its knowledge words.

    Latin-script phrases only: a title's head noun is always a Latin-script word
    (query.head_term), and the last word of a Ukrainian or Japanese phrase is
    not its head.
    """
    phrases = [*NAME_PARTS.split(category.name), *(knowledge.terms if knowledge else [])]
    return [
        words
        for words in (terms(phrase) for phrase in phrases)
        if words and all(map(is_latin, words))
    ]


def _name_field(category: Category, aliases: list[str] | tuple) -> dict[str, float]:
    field: dict[str, float] = {term: ALIAS_WEIGHT for alias in aliases for term in terms(alias)}
    field.update({term: OWN_NAME_WEIGHT for term in terms(category.name)})
    return field


def _aliases(taxonomy: Taxonomy, taxonomy_dir: Path) -> dict[str, list[str]]:
    """Other names of each category id: translations and, for Google, mapped Shopify names."""
    shopify_names = _shopify_localized_names(taxonomy_dir)
    if taxonomy.name != GOOGLE:
        return shopify_names
    aliases: dict[str, list[str]] = defaultdict(list)
    for shopify_id, google_id, shopify_path in shopify_to_google(taxonomy_dir):
        aliases[google_id].append(shopify_path.rsplit(PATH_SEPARATOR, 1)[-1])
        aliases[google_id].extend(shopify_names.get(shopify_id, ()))
    return aliases


def _shopify_localized_names(taxonomy_dir: Path) -> dict[str, list[str]]:
    names: dict[str, list[str]] = defaultdict(list)
    for by_handle in shopify_names_by_language(taxonomy_dir).values():
        for handle, name in by_handle.items():
            names[handle].append(name)
    return names


def shopify_names_by_language(taxonomy_dir: Path) -> dict[str, dict[str, str]]:
    """Shopify's translated category names: {language: {handle: name}}, languages sorted."""
    names: dict[str, dict[str, str]] = {}
    for path in sorted((taxonomy_dir / SHOPIFY_LOCALIZED_DIR).glob("categories.*.txt.gz")):
        language = path.name.removeprefix("categories.").removesuffix(".txt.gz")
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            names[language] = {
                handle: localized_path.rsplit(PATH_SEPARATOR, 1)[-1]
                for handle, localized_path in parse_shopify_lines(lines.read())
            }
    return names


def shopify_to_google(taxonomy_dir: Path) -> list[tuple[str, str, str]]:
    path = taxonomy_dir / SHOPIFY_TO_GOOGLE_FILE
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as rows:
        return [
            (row["shopify_id"], row["google_id"], row["shopify_path"])
            for row in csv.DictReader(rows, delimiter="\t")
        ]

"""Load a taxonomy and its candidate index by name, building or reusing the cache."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from shared.taxonomy import cache
from shared.taxonomy.documents import build_documents, shopify_names_by_language, source_files
from shared.taxonomy.embeddings import shared_embedder
from shared.taxonomy.errors import UnknownTaxonomy
from shared.taxonomy.files import (
    GOOGLE,
    GOOGLE_FILE,
    SHOPIFY,
    SHOPIFY_FILE,
    parse_google,
    parse_shopify,
    read_text,
)
from shared.taxonomy.lexical import TermIndex, bm25_index, coverage_index
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.models import Taxonomy
from shared.taxonomy.search import TAXONOMY_WEIGHTS, CandidateIndex
from shared.taxonomy.sentences import shared_sentence_embedder
from shared.taxonomy.text import clean
from shared.taxonomy.translation import Translations

logger = logging.getLogger(__name__)

TAXONOMY_FILES = {GOOGLE: GOOGLE_FILE, SHOPIFY: SHOPIFY_FILE}
PARSERS = {GOOGLE: parse_google, SHOPIFY: parse_shopify}
# Dimensions the category sentence vectors keep (of 512), part of the cache key: see lowrank.py.
SENTENCE_RANK = 256
# Bump whenever what goes into the index changes, so old caches are ignored.
INDEX_FORMAT = "5"


def taxonomy_file(taxonomy_dir: Path, name: str) -> Path:
    if name not in TAXONOMY_FILES:
        raise UnknownTaxonomy(name, tuple(TAXONOMY_FILES))
    return taxonomy_dir / TAXONOMY_FILES[name]


def load_taxonomy(taxonomy_dir: Path, name: str) -> Taxonomy:
    path = taxonomy_file(taxonomy_dir, name)
    return PARSERS[name](read_text(path), path)


def load_index(taxonomy_dir: Path, name: str, cache_dir: Path) -> CandidateIndex:
    """The candidate index of a taxonomy, from the cache when its files are unchanged."""
    taxonomy = load_taxonomy(taxonomy_dir, name)
    inputs = [taxonomy_file(taxonomy_dir, name), *source_files(taxonomy_dir)]
    key = cache.content_key(inputs, f"{INDEX_FORMAT}-rank{SENTENCE_RANK}")
    cache_path = cache_dir / f"{name.lower()}-{key[:24]}.npz"
    arrays = cache.read(cache_path)
    if arrays is None:
        logger.info("Building the %s index (no cache at %s)", name, cache_path)
        arrays = build_arrays(taxonomy, taxonomy_dir)
        cache.write(cache_path, arrays)
    return index_from_arrays(taxonomy, arrays)


def build_arrays(taxonomy: Taxonomy, taxonomy_dir: Path) -> dict[str, np.ndarray]:
    documents = build_documents(taxonomy, taxonomy_dir)
    return {
        **bm25_index([doc.name for doc in documents]).to_arrays("names_"),
        **bm25_index([doc.path for doc in documents]).to_arrays("paths_"),
        **coverage_index([doc.own_name for doc in documents]).to_arrays("coverage_"),
        "vectors": shared_embedder().embed([doc.embedding_text for doc in documents]),
        **LowRankVectors.fit(
            shared_sentence_embedder().embed(
                [clean(category.name) for category in taxonomy.categories.values()]
            ),
            SENTENCE_RANK,
        ).to_arrays("sentence_"),
        **_translations(taxonomy, taxonomy_dir).to_arrays("translations_"),
    }


def _translations(taxonomy: Taxonomy, taxonomy_dir: Path) -> Translations:
    """Shopify's word table; none for Google, whose folds it did not move."""
    if not TAXONOMY_WEIGHTS[taxonomy.name].translated_terms:
        return Translations({})
    english = {category.id: category.name for category in taxonomy.categories.values()}
    return Translations.build(english, shopify_names_by_language(taxonomy_dir))


def index_from_arrays(taxonomy: Taxonomy, arrays: dict[str, np.ndarray]) -> CandidateIndex:
    categories = list(taxonomy.categories.values())
    return CandidateIndex(
        taxonomy=taxonomy,
        ids=[category.id for category in categories],
        leaf_mask=np.array([category.is_leaf for category in categories], dtype=bool),
        names=TermIndex.from_arrays(arrays, "names_"),
        paths=TermIndex.from_arrays(arrays, "paths_"),
        coverage=TermIndex.from_arrays(arrays, "coverage_"),
        vectors=arrays["vectors"],
        embedder=shared_embedder(),
        sentence_vectors=LowRankVectors.from_arrays(arrays, "sentence_"),
        sentence_embedder=shared_sentence_embedder(),
        depths=np.array([category.depth for category in categories], dtype=np.float32),
        translations=Translations.from_arrays(arrays, "translations_"),
        weights=TAXONOMY_WEIGHTS[taxonomy.name],
    )

"""Load a taxonomy and its candidate index by name, building or reusing the cache."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np

from shared.taxonomy import cache
from shared.taxonomy.branches import BranchModel, title_and_term_words
from shared.taxonomy.children import Children
from shared.taxonomy.documents import (
    build_documents,
    knowledge_document,
    heads_document,
    regional_heads_document,
    regional_document,
    knowledge_terms_document,
    modifiers_document,
    shopify_names_by_language,
    shopify_to_google,
    source_files,
)
from shared.taxonomy.embeddings import shared_embedder
from shared.taxonomy.exemplars import Exemplars
from shared.taxonomy.files import GOOGLE, SHOPIFY, load_taxonomy, taxonomy_file
from shared.taxonomy.knowledge.store import DATA_DIR as KNOWLEDGE_DIR
from shared.taxonomy.knowledge.store import Knowledge, load_knowledge
from shared.taxonomy.lexical import TermIndex, WordMaps, bm25_index, coverage_index, share_words
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.models import Category, Taxonomy
from shared.taxonomy.search import TAXONOMY_WEIGHTS, CandidateIndex
from shared.taxonomy.query import semantic_text
from shared.taxonomy.sentences import DIMENSIONS as SENTENCE_DIMENSIONS
from shared.taxonomy.sentences import shared_sentence_embedder
from shared.taxonomy.text import clean
from shared.taxonomy.translation import Translations

logger = logging.getLogger(__name__)

# Dimensions the category sentence vectors keep (of 512), part of the cache key: see lowrank.py.
SENTENCE_RANK = 256
# Bump whenever what goes into the index changes, so old caches are ignored.
INDEX_FORMAT = "18"
# Exemplar titles embedded between two progress lines of a cold build.
EXEMPLAR_PROGRESS_EVERY = 5000


def load_index(
    taxonomy_dir: Path, name: str, cache_dir: Path, knowledge_dir: Path = KNOWLEDGE_DIR
) -> CandidateIndex:
    """The candidate index of a taxonomy, from the cache when its files are unchanged."""
    taxonomy = load_taxonomy(taxonomy_dir, name)
    # Every knowledge file counts: Google's index also reads Shopify's knowledge.
    inputs = [
        taxonomy_file(taxonomy_dir, name),
        *source_files(taxonomy_dir),
        *sorted(path for path in knowledge_dir.rglob("*.jsonl*") if path.is_file()),
    ]
    # An index whose taxonomy weights the second-level branches holds their model.
    subbranches = "-subbranches" if TAXONOMY_WEIGHTS[taxonomy.name].subbranch else ""
    # And its parents' titles are filtered at this threshold (1.0: not at all).
    parents = f"-parents{DESCENDANT_PRODUCT_SIMILARITY.get(taxonomy.name, 1.0)}"
    key = cache.content_key(inputs, f"{INDEX_FORMAT}-rank{SENTENCE_RANK}{subbranches}{parents}")
    cache_path = cache_dir / f"{name.lower()}-{key[:24]}.npz"
    arrays = cache.read(cache_path)
    if arrays is None:
        logger.info("Building the %s index (no cache at %s)", name, cache_path)
        arrays = share_words(build_arrays(taxonomy, taxonomy_dir, knowledge_dir))
        cache.write(cache_path, arrays)
    return index_from_arrays(taxonomy, arrays)


def build_arrays(
    taxonomy: Taxonomy, taxonomy_dir: Path, knowledge_dir: Path = KNOWLEDGE_DIR
) -> dict[str, np.ndarray]:
    documents = build_documents(taxonomy, taxonomy_dir)
    knowledge = category_knowledge(taxonomy, taxonomy_dir, knowledge_dir)
    categories = list(taxonomy.categories.values())
    name_vectors = shared_sentence_embedder().embed([clean(c.name) for c in categories])
    knowledge, exemplars = _exemplars(taxonomy, knowledge)
    return {
        **bm25_index(
            [knowledge_document(knowledge.get(category.id)) for category in categories]
        ).to_arrays("knowledge_"),
        **bm25_index(
            [knowledge_terms_document(c, knowledge.get(c.id)) for c in categories]
        ).to_arrays("knowledge_terms_"),
        **bm25_index([regional_document(knowledge.get(c.id)) for c in categories]).to_arrays(
            "regional_"
        ),
        **bm25_index([heads_document(c, knowledge.get(c.id)) for c in categories]).to_arrays(
            "heads_"
        ),
        **bm25_index([regional_heads_document(knowledge.get(c.id)) for c in categories]).to_arrays(
            "regional_heads_"
        ),
        **bm25_index([modifiers_document(c, knowledge.get(c.id)) for c in categories]).to_arrays(
            "modifiers_"
        ),
        **exemplars.to_arrays("exemplars_"),
        **_branch_model(categories, knowledge, exemplars, 1).to_arrays("branches_"),
        **_subbranch_model(taxonomy, categories, knowledge, exemplars).to_arrays("subbranches_"),
        **bm25_index([doc.name for doc in documents]).to_arrays("names_"),
        **bm25_index([doc.path for doc in documents]).to_arrays("paths_"),
        **coverage_index([doc.own_name for doc in documents]).to_arrays("coverage_"),
        **coverage_index([kind for doc in documents for kind in doc.kinds]).to_arrays("kind_coverage_"),
        "kind_owners": np.array(
            [row for row, doc in enumerate(documents) for _ in doc.kinds], dtype=np.int32
        ),
        "vectors": shared_embedder().embed([doc.embedding_text for doc in documents]),
        **LowRankVectors.fit(name_vectors, SENTENCE_RANK).to_arrays("sentence_"),
        **_translations(taxonomy, taxonomy_dir).to_arrays("translations_"),
    }


def category_knowledge(
    taxonomy: Taxonomy, taxonomy_dir: Path, knowledge_dir: Path = KNOWLEDGE_DIR
) -> dict[str, Knowledge]:
    """A category's own knowledge; for Google, also the terms and regional names of the
    Shopify categories mapped to it.

    Google files under one category what Shopify splits into several
    (T-shirts, polos and tank tops are all "Shirts & Tops"), so the words
    written for the finer Shopify leaves belong to the Google category too.
    Their titles are not taken: as exemplars they cost a fifth more rows for
    no gain on the held-out folds (docs/classification.md).
    """
    knowledge = load_knowledge(taxonomy.name, taxonomy.version, knowledge_dir)
    mapping = shopify_to_google(taxonomy_dir) if taxonomy.name == GOOGLE else []
    if not mapping:
        return knowledge
    shopify = load_taxonomy(taxonomy_dir, SHOPIFY)
    mapped = load_knowledge(SHOPIFY, shopify.version, knowledge_dir)
    for shopify_id, google_id, _ in mapping:
        source = mapped.get(shopify_id)
        if source is None or google_id not in taxonomy.categories:
            continue
        entry = knowledge.setdefault(google_id, Knowledge())
        entry.terms.extend(source.terms)
        entry.regional.extend(source.regional)
    return knowledge


def _exemplars(
    taxonomy: Taxonomy, knowledge: dict[str, Knowledge]
) -> tuple[dict[str, Knowledge], Exemplars]:
    """Every category's exemplar titles embedded, in the taxonomy's order; where the
    taxonomy says so, a parent's without its descendants' products, and the
    knowledge without those titles too."""
    ids = [c for c in taxonomy.categories if knowledge.get(c) and knowledge[c].titles]
    texts = [semantic_text(title) for c in ids for title in knowledge[c].titles]
    embedder = shared_sentence_embedder()
    vectors = np.zeros((len(texts), SENTENCE_DIMENSIONS), dtype=np.float32)
    for start in range(0, len(texts), EXEMPLAR_PROGRESS_EVERY):
        logger.info(
            "%s: embedding exemplar titles %d-%d of %d",
            taxonomy.name,
            start,
            min(start + EXEMPLAR_PROGRESS_EVERY, len(texts)),
            len(texts),
        )
        vectors[start : start + EXEMPLAR_PROGRESS_EVERY] = embedder.embed(
            texts[start : start + EXEMPLAR_PROGRESS_EVERY]
        )
    bounds = np.cumsum([0] + [len(knowledge[c].titles) for c in ids])
    by_category = {c: vectors[bounds[i] : bounds[i + 1]] for i, c in enumerate(ids)}
    if taxonomy.name in DESCENDANT_PRODUCT_SIMILARITY:
        knowledge, by_category = parents_own_titles(
            taxonomy, knowledge, by_category, DESCENDANT_PRODUCT_SIMILARITY[taxonomy.name]
        )
    nothing = np.zeros((0, SENTENCE_DIMENSIONS), np.float32)
    rows = [by_category.get(c, nothing) for c in taxonomy.categories]
    return knowledge, Exemplars.build(np.concatenate(rows), [len(r) for r in rows], SENTENCE_RANK)


# A parent's title this close (cosine of sentence vectors) to a title of one
# of its descendants is that descendant's kind of product (parents_own_titles).
# Chosen on Shopify's tuning sets (0.5-0.9 tried, docs/classification.md);
# Google's parents keep every title: no threshold gained there.
DESCENDANT_PRODUCT_SIMILARITY = {SHOPIFY: 0.7}


def parents_own_titles(
    taxonomy: Taxonomy,
    knowledge: dict[str, Knowledge],
    vectors: dict[str, np.ndarray],
    threshold: float,
) -> tuple[dict[str, Knowledge], dict[str, np.ndarray]]:
    """Each parent's titles (and their vectors) without those close to a descendant's title.

    A parent's record was meant to hold what is filed at its level (sets,
    kinds no child takes), but many also list their children's products
    ("Apple MacBook Air M2" under Computers, beside Laptops): the parent then
    matches such a listing as closely as the child, and wins on the depth
    prior. Its other titles, and its terms, stay. Every parent is compared
    with its descendants' titles as given, so the order does not matter.
    """
    descendants: dict[str, list[str]] = {}
    for category in taxonomy.categories.values():
        ancestor = category.parent_id
        while ancestor is not None:
            descendants.setdefault(ancestor, []).append(category.id)
            ancestor = taxonomy.categories[ancestor].parent_id
    kept_knowledge, kept_vectors = dict(knowledge), dict(vectors)
    for parent_id, below in descendants.items():
        own = vectors.get(parent_id)
        theirs = [vectors[c] for c in below if c in vectors]
        if own is None or not len(own) or not theirs:
            continue
        kept = (own @ np.concatenate(theirs).T).max(axis=1) < threshold
        record = knowledge[parent_id]
        kept_knowledge[parent_id] = dataclasses.replace(
            record, titles=[title for title, keep in zip(record.titles, kept) if keep]
        )
        kept_vectors[parent_id] = own[kept]
    return kept_knowledge, kept_vectors


def _branch_model(
    categories: list[Category], knowledge: dict[str, Knowledge], exemplars: Exemplars, levels: int
) -> BranchModel:
    """The branch classifier, trained on the exemplar titles and the knowledge words.

    Its classes are the categories' ancestors `levels` deep: 1, the
    top-level branches; 2, the second-level ones ("Home & Garden > Decor"; a
    top-level category is its own: the word model alone, see
    shared/taxonomy/branches.py).
    """
    branch_numbers: dict[tuple[str, ...], int] = {}
    category_branches = np.array(
        [branch_numbers.setdefault(tuple(c.tags[:levels]), len(branch_numbers)) for c in categories],
        dtype=np.int64,
    )
    owners = np.repeat(np.arange(len(categories)), np.diff(exemplars.offsets))
    words = [
        title_and_term_words(record.titles, record.terms) if record else {}
        for record in (knowledge.get(category.id) for category in categories)
    ]
    return BranchModel.fit(category_branches, exemplars.vectors, owners, words, levels == 1)


def _subbranch_model(
    taxonomy: Taxonomy,
    categories: list[Category],
    knowledge: dict[str, Knowledge],
    exemplars: Exemplars,
) -> BranchModel:
    """The second-level branch model where the taxonomy weights it; else one branch, nothing learnt.

    At weight 0 it costs neither build time nor memory (both taxonomies
    weight it since the ninth round).
    """
    if not TAXONOMY_WEIGHTS[taxonomy.name].subbranch:
        nothing = LowRankVectors.identity(np.zeros((0, SENTENCE_DIMENSIONS), dtype=np.float32))
        one_branch = np.zeros(len(categories), dtype=np.int64)
        return BranchModel.fit(
            one_branch, nothing, np.zeros(0, np.int64), [{}] * len(categories), with_vectors=False
        )
    return _branch_model(categories, knowledge, exemplars, 2)


def _translations(taxonomy: Taxonomy, taxonomy_dir: Path) -> Translations:
    """Shopify's word table; none for Google, whose folds it did not move."""
    if not TAXONOMY_WEIGHTS[taxonomy.name].translated_terms:
        return Translations({})
    english = {category.id: category.name for category in taxonomy.categories.values()}
    return Translations.build(english, shopify_names_by_language(taxonomy_dir))


def _parent_rows(categories: list[Category]) -> np.ndarray:
    """Each category's parent's position in `categories`, -1 for a top-level category."""
    rows = {category.id: row for row, category in enumerate(categories)}
    return np.array(
        [-1 if c.parent_id is None else rows.get(c.parent_id, -1) for c in categories],
        dtype=np.int64,
    )


def index_from_arrays(taxonomy: Taxonomy, arrays: dict[str, np.ndarray]) -> CandidateIndex:
    categories = list(taxonomy.categories.values())
    # One string per word over all the fields' word maps, and one map for
    # the two branch levels, trained on the same words.
    word_maps = WordMaps(arrays)
    weights = TAXONOMY_WEIGHTS[taxonomy.name]
    # A taxonomy whose fusion gives the static word vectors no weight does not
    # keep its categories' vectors in memory (Shopify: 10.8 MB).
    vectors = arrays["vectors"] if weights.static_embedding else np.zeros((len(categories), 0), np.float32)
    return CandidateIndex(
        taxonomy=taxonomy,
        ids=[category.id for category in categories],
        leaf_mask=np.array([category.is_leaf for category in categories], dtype=bool),
        names=TermIndex.from_arrays(arrays, "names_", word_maps),
        paths=TermIndex.from_arrays(arrays, "paths_", word_maps),
        coverage=TermIndex.from_arrays(arrays, "coverage_", word_maps),
        kind_coverage=TermIndex.from_arrays(arrays, "kind_coverage_", word_maps),
        kind_owners=arrays["kind_owners"],
        vectors=vectors,
        embedder=shared_embedder(),
        sentence_vectors=LowRankVectors.from_arrays(arrays, "sentence_"),
        sentence_embedder=shared_sentence_embedder(),
        depths=np.array([category.depth for category in categories], dtype=np.float32),
        translations=Translations.from_arrays(arrays, "translations_"),
        knowledge=TermIndex.from_arrays(arrays, "knowledge_", word_maps),
        knowledge_terms=TermIndex.from_arrays(arrays, "knowledge_terms_", word_maps),
        regional=TermIndex.from_arrays(arrays, "regional_", word_maps),
        heads=TermIndex.from_arrays(arrays, "heads_", word_maps),
        regional_heads=TermIndex.from_arrays(arrays, "regional_heads_", word_maps),
        modifiers=TermIndex.from_arrays(arrays, "modifiers_", word_maps),
        exemplars=Exemplars.from_arrays(arrays, "exemplars_"),
        children=Children.build(_parent_rows(categories)),
        branches=BranchModel.from_arrays(arrays, "branches_", word_maps),
        subbranches=BranchModel.from_arrays(arrays, "subbranches_", word_maps),
        weights=weights,
    )

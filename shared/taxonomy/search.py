"""Candidate generation: the categories whose names and product knowledge best match a product.

A category's raw score fuses these signals and a prior (weights per taxonomy, measured on
held-out folds, see docs/classification.md):
- BM25 of the query against its name field (translations and aliases included),
  the query's foreign words adding their English translations (Shopify);
- for Google, a bonus when the name holds the title's head noun;
- how much of its own name the query covers;
- cosine similarity of the title's static embedding and the category's;
- cosine similarity of the multilingual sentence embeddings of the listing's
  beginning and of the category's name;
- for a Shopify listing in Spanish or Portuguese, BM25 of the query against
  the category's names in Latin American Spanish and Brazilian Portuguese;
- BM25 of the query against the product knowledge written for it (typical
  titles and the words shoppers use: "iPhone" finds Mobile Phones), a bonus
  when the title's head noun heads one of its product words, and the
  similarity to its closest exemplar title;
- a penalty when the title's head noun only qualifies the category's product
  words (Wine Glass Charms for wine glasses: an accessory of the product);
- between a parent and its children: the child inherits the parent's name
  coverage, and a parent gives way to a child whose knowledge matches better;
- the log-probability of its top-level branch (relative to the likeliest),
  from a classifier trained on the knowledge's exemplar titles and words,
  and (where weighted) that of its second-level branch, from another;
- minus a little per level of depth: merchants file products under general
  categories more often than the taxonomy's shape suggests, and a deep
  category must earn its place with a better match;
- for a listing that sells the shop's own service ("our ... service"), a
  bonus for the Services branch (Shopify), or each leaf's score passed to
  its parent (Google, which has no services: its leaves name goods).
`CandidateIndex` is read-only once built, so threads may share it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from shared.taxonomy.branches import SURE, BranchModel
from shared.taxonomy.children import Children
from shared.taxonomy.embeddings import StaticEmbedder
from shared.taxonomy.exemplars import Exemplars
from shared.taxonomy.files import GOOGLE, SHOPIFY
from shared.taxonomy.lexical import TermIndex
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.models import Candidate, Taxonomy
from shared.taxonomy.query import (
    TITLE_WEIGHT,
    description_head,
    head_term,
    listing_text,
    names_product_first,
    offers_service,
    product_first_head,
    query_terms,
    semantic_text,
    split_listing,
    with_design_noun,
)
from shared.taxonomy.sentences import SentenceEmbedder
from shared.taxonomy.text import clean
from shared.taxonomy.translation import Translations

DEFAULT_LIMIT = 15


@dataclass(frozen=True)
class FusionWeights:
    name: float = 1.0
    path: float = 0.1
    coverage: float = 20.0
    static_embedding: float = 30.0
    sentence: float = 60.0
    depth_penalty: float = 2.0
    head_noun: float = 0.0
    # Weight of a foreign query term's English translations, relative to it.
    translated_terms: float = 0.0
    # Product knowledge (shared/taxonomy/knowledge): BM25 of the query over the
    # titles and words written for each category; a flat bonus when the
    # title's head noun is among those words (knowledge_head), and a larger one
    # when it is the head of the category's name or of one of its product
    # words, "mouse" for Mice but not for Mouse Pads (product_head); the
    # listing's similarity to the category's closest exemplar title.
    knowledge: float = 0.0
    # BM25 of a Spanish or Portuguese listing's query over the category's
    # regional names (knowledge/store.py), a field of their own.
    regional: float = 0.0
    knowledge_head: float = 0.0
    product_head: float = 0.0
    exemplar: float = 0.0
    # With a margin, a category's exemplar score is how far its closest
    # exemplar comes within `exemplar_margin` of the listing's closest
    # exemplar of any category (exemplar_scores); 0, the similarity itself.
    exemplar_margin: float = 0.0
    # Negative: a category whose product words hold the title's head noun only
    # as a qualifier ("glass" in Wine Glass Charms for a wine glass) sells
    # something that goes with the product, not the product.
    modifier_head: float = 0.0
    # The share of its name signals (NAME_SIGNALS) such a category loses: its
    # name matches the title through the qualifier ("Wine Glass Charms" reads
    # much like "wine glasses" to the sentence encoder).
    modifier_name_discount: float = 0.0
    # Taken from a parent for each point of knowledge BM25 by which one of
    # its children beats it: the parent's knowledge also describes its
    # children's products, so it matches nearly as well as the child it
    # should give way to.
    child_knowledge: float = 0.0
    # Given to a child for each point of name coverage its parent has over it:
    # a title that names "Batteries" names what "General Purpose Batteries"
    # are too, and the child's own words and exemplars then decide.
    parent_coverage: float = 0.0
    # Per unit of the log-probability of the category's top-level branch
    # relative to the likeliest branch (shared/taxonomy/branches.py): a
    # category in a branch the listing does not belong to loses.
    branch: float = 0.0
    # The same for the category's second-level branch ("Home & Garden >
    # Decor"; a top-level category is its own), from the knowledge words of
    # each such branch: it tells subtrees of one top-level branch apart.
    subbranch: float = 0.0
    # The share of the branch model's sentence vector taken from the title
    # and more of the description (query.listing_text) rather than from the
    # vector of the other signals (query.semantic_text): 0 or 1, or between.
    branch_listing_share: float = 0.0
    # A flat bonus, for a listing that names its product first (Spanish,
    # Portuguese...), when its title's first word heads one of the category's
    # regional names ("Tablero eléctrico" and "tableros eléctricos"): the
    # English head noun (product_head) of such a title is the last word, often
    # a brand or a product line ("Toma GFCI 20A negra Mercury").
    regional_head: float = 0.0
    # A bonus for the categories of the taxonomy's Services branch
    # (SERVICES_BRANCH) when the listing sells the shop's own service
    # (query.offers_service): a salon's "Bridal Makeup service" is filed with
    # services, not with makeup, though every word of it names goods.
    service: float = 0.0
    # Where a taxonomy has no services, a service is filed under what it
    # tends (a waxing session at Hair Removal), not at a leaf, which names
    # goods (Waxing Kits & Supplies): for such a listing each leaf's final
    # score passes to its parent, and the leaf loses this share of it.
    service_leaf_discount: float = 0.0
    # The share of the English head-noun signals (ENGLISH_HEAD_SIGNALS) a
    # listing loses when its first word heads regional names (regional_head):
    # the last word of such a title, which those signals read, is often a
    # brand or a product line ("Dimmer Xahara Madera New Light" is a dimmer,
    # not a light).
    english_head_discount: float = 0.0
    # The share of its name signals (NAME_SIGNALS) a category loses when the
    # listing's first word heads regional names (regional_head) but not the
    # category's: the words after that first noun qualify it, and some are
    # English words too ("Toma doble polo a tierra" is a wall outlet, and
    # "polo" matches Polos by name).
    regional_name_discount: float = 0.0
    # A flat bonus, for an English listing, when the noun its description
    # says the product is ("This sculptural ring is...", "stylish earrings
    # made from...": query.description_head) heads one of the category's
    # product names, as for product_head: a title is often only a design's
    # name ("Sunset Coil", "Crayfish"), and where it is not, the two agree.
    description_head: float = 0.0


# Enough for a Services category to win over the goods whose every word a
# salon's listing holds (laser hair removal devices), with the branch models
# against it: at 60 and 120 some of the relabelled sets' services still went
# to goods (docs/classification.md, nineteenth round).
SERVICE_BONUS = 250.0
# What a leaf keeps of its score for a listing selling a service, in a
# taxonomy without services (its parent takes the whole): little enough that
# the leaves fall out of the candidates (at half, the local selector took a
# leaf back on its votes), yet still ordered for a request that asks for leaves.
SERVICE_LEAF_SHARE = 0.05
# A first word that heads the regional names of more categories than this
# ("accesorios" 558, "kit" 390, "caja" 160) says what is sold no more than
# "set" does in an English title: no bonus.
MAX_REGIONAL_HEAD_CATEGORIES = 50
# The top-level category whose categories are services, where a taxonomy has one.
SERVICES_BRANCH = "Services"

# Tuned on the dev set and checked on stores held out (docs/classification.md).
# Shopify's merchants label more generally and in more languages: a stronger
# sentence signal and depth prior help there on every held-out fold, and the
# static word vectors hurt, so they are not computed for it at all.
# Google gains from the head-noun bonus on every held-out fold; Shopify's folds
# disagree (its listings are more often not English), so it has none.
# Translated query terms add to Shopify's recall and path-consistency on the
# fold whose stores write Spanish, and change nothing on the others.
# The knowledge weights (sixth round) and the qualifier and parent-child
# weights (seventh round) were chosen on the store hold-out folds of dev.jsonl
# and on folds of our own clean sets (bench/fusion_folds.py), and so was the
# branch model's weight (eighth round). Google's branch model reads more of a
# listing it is unsure of; on Shopify's store folds that loses recall@1 on
# one fold at every share tried, so it reads what the other signals read.
# So was the second-level branch model's (ninth round: its word model
# alone), at a weight where no fold loses recall@1, path-consistent or
# top-level agreement. The services weights (nineteenth round) were chosen on
# the relabelled tuning set: careful reviewers file a salon's treatments as
# services, where dev.jsonl's merchant filed them as goods.
# Shopify's regional name discount (twenty-second round) was chosen on the
# store folds of the two relabelled tuning sets, dev.jsonl and our clean
# sets: at 0.5 every fold gains or holds but one dev.jsonl fold, which loses
# one recall@1 item of 255 (and gains top-level); at 0.75 a tuning fold loses.
TAXONOMY_WEIGHTS = {
    GOOGLE: FusionWeights(
        head_noun=4.0,
        knowledge=1.25,
        regional=1.0,
        knowledge_head=4.0,
        product_head=16.0,
        exemplar=60.0,
        exemplar_margin=0.15,
        modifier_head=-8.0,
        parent_coverage=15.0,
        branch=6.0,
        branch_listing_share=1.0,
        subbranch=4.0,
        english_head_discount=0.5,
        description_head=16.0,
        service_leaf_discount=1.0 - SERVICE_LEAF_SHARE,
    ),
    SHOPIFY: FusionWeights(
        static_embedding=0.0,
        sentence=80.0,
        depth_penalty=3.0,
        translated_terms=0.3,
        knowledge=1.0,
        regional=1.0,
        knowledge_head=4.0,
        product_head=16.0,
        regional_head=16.0,
        english_head_discount=0.5,
        regional_name_discount=0.5,
        description_head=24.0,
        exemplar=30.0,
        modifier_name_discount=0.25,
        child_knowledge=0.5,
        parent_coverage=5.0,
        branch=4.0,
        subbranch=4.0,
        service=SERVICE_BONUS,
    ),
}
# Raw scores map to [0, 1] as s / (s + SCORE_HALF_POINT), so a raw score of
# this size (a full name match, a good BM25 score, close embeddings) reads as 0.5.
SCORE_HALF_POINT = 60.0
# Products scored together by candidates_many: enough for the encoder to
# stream its weights once for many texts, while the (products x categories)
# score matrix stays a few megabytes.
BATCH_SIZE = 64
# Categories whose exemplars a product is compared with: the best this many
# by every other signal.
EXEMPLAR_SHORTLIST = 200
# The signals (besides the nearest exemplar) whose own favourite among the
# candidates counts as support for it: see CandidateIndex._support.
SUPPORT_SIGNALS = ("name", "sentence", "knowledge")
# The signals that give a bonus for the title's head noun (its last word).
ENGLISH_HEAD_SIGNALS = ("head_noun", "knowledge_head", "product_head")
# The signals that read the title's head noun.
HEAD_SIGNALS = (*ENGLISH_HEAD_SIGNALS, "modifier_head", "modifier_name_discount")
# The signals that match a category's name (its own words, or its vectors).
NAME_SIGNALS = ("name", "coverage", "sentence", "static_embedding")


@dataclass(frozen=True)
class CandidateIndex:
    taxonomy: Taxonomy
    ids: list[str]
    leaf_mask: np.ndarray
    names: TermIndex
    paths: TermIndex
    coverage: TermIndex
    # Name coverage of each kind of product a name joins, and the category each kind is of.
    kind_coverage: TermIndex
    kind_owners: np.ndarray
    vectors: np.ndarray
    embedder: StaticEmbedder
    sentence_vectors: LowRankVectors
    sentence_embedder: SentenceEmbedder
    depths: np.ndarray
    translations: Translations
    knowledge: TermIndex
    knowledge_terms: TermIndex
    regional: TermIndex
    heads: TermIndex
    regional_heads: TermIndex
    modifiers: TermIndex
    exemplars: Exemplars
    children: Children
    branches: BranchModel
    subbranches: BranchModel
    weights: FusionWeights

    @functools.cached_property
    def in_services_branch(self) -> np.ndarray:
        """1 for each category under SERVICES_BRANCH, 0 for the others."""
        categories = self.taxonomy.categories
        return np.array(
            [categories[i].tags[0] == SERVICES_BRANCH for i in self.ids], dtype=np.float32
        )

    def raw_scores_many(self, products: Sequence[str]) -> np.ndarray:
        """Fused scores of every category, one row per product.

        A row is all zero when its text has no letter at all. Text in scripts
        the lexical side does not read (Georgian, Armenian, Devanagari, ...)
        is still scored by its embeddings. Scores are never negative. The
        encoders and the similarity products run once for the whole batch:
        the sentence encoder streams its weights once for many texts.
        """
        return self._score(products).scores

    def _score(self, products: Sequence[str], leafs_only: bool = False) -> "_Scored":
        use_one_blas_thread()
        weights = self.weights
        scores = np.zeros((len(products), len(self.ids)), dtype=np.float32)
        rows = [row for row, product in enumerate(products) if _has_letters(product)]
        if not rows:
            return _Scored(scores, rows, np.zeros((0, 0), dtype=np.float32), {})
        texts = [products[row] for row in rows]
        sentences, signals = self.signals_many(texts, weights)
        fused = self.fuse(signals, weights)
        if weights.exemplar:
            self._add_exemplars(fused, sentences, weights)
        self.file_services(fused, texts, weights, leafs_only=leafs_only)
        scores[rows] = fused
        np.maximum(scores, 0.0, out=scores)
        return _Scored(scores, rows, sentences, signals)

    def fuse(self, signals: dict[str, np.ndarray], weights: FusionWeights) -> np.ndarray:
        """The weighted sum of the signals (texts x categories) and the depth prior.

        The nearest exemplars are added afterwards, on a shortlist (_add_exemplars).
        """
        prior = -weights.depth_penalty * self.depths
        fused = prior[None, :] + sum(
            getattr(weights, name) * matrix for name, matrix in signals.items()
        )
        # What a category matches by its name, for the discounts that take a share of it.
        by_name = (
            sum(getattr(weights, name) * signals[name] for name in NAME_SIGNALS if name in signals)
            if weights.regional_name_discount or weights.modifier_name_discount
            else 0.0
        )
        # Listings whose title's first word heads regional names (regional_head).
        read_first_word = (
            signals["regional_head"].any(axis=1, keepdims=True).astype(np.float32)
            if "regional_head" in signals
            else 0.0
        )
        if weights.english_head_discount:
            lost = weights.english_head_discount * read_first_word
            for name in ENGLISH_HEAD_SIGNALS:
                if name in signals:
                    fused -= lost * getattr(weights, name) * signals[name]
        if weights.regional_name_discount:
            elsewhere = read_first_word * (1.0 - signals["regional_head"])
            fused -= weights.regional_name_discount * elsewhere * by_name
        if weights.modifier_name_discount:
            fused -= weights.modifier_name_discount * signals["modifier_head"] * by_name
        return fused

    def signals_many(
        self, texts: Sequence[str], weights: FusionWeights | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The texts' sentence vectors, and each signal's unweighted scores (texts x categories).

        Only the signals `weights` gives weight to; with no weights, all of
        them. The exemplars are not among them: they are scored on a
        shortlist of the others' best (_add_exemplars).
        """

        def wanted(name: str) -> bool:
            return weights is None or bool(getattr(weights, name))

        translated_weight = (weights or self.weights).translated_terms
        texts = [with_design_noun(text) for text in texts]
        sentences = self.sentence_embedder.embed([semantic_text(text) for text in texts])
        signals: dict[str, np.ndarray] = {}
        if wanted("sentence"):
            signals["sentence"] = np.maximum(self.sentence_vectors.similarities(sentences), 0.0)
        if wanted("static_embedding") and self.vectors.shape[1]:
            titles = self.embedder.embed([clean(split_listing(text)[0]) for text in texts])
            signals["static_embedding"] = np.maximum(titles @ self.vectors.T, 0.0)
        queries = [query_terms(text) for text in texts]
        lexical = [
            self._lexical_signals(text, dict(query), translated_weight, wanted)
            for text, query in zip(texts, queries)
        ]
        for name in lexical[0]:
            signals[name] = np.stack([row[name] for row in lexical])
        if wanted("branch"):
            listing_share = (weights or self.weights).branch_listing_share
            log_probabilities = self.branch_log_probabilities(texts, sentences, queries, listing_share)
            signals["branch"] = self.branches.category_scores(log_probabilities)
        if wanted("subbranch"):
            # The second-level model reads the words only (branches.py).
            log_probabilities = self.subbranches.log_probabilities(sentences, queries)
            signals["subbranch"] = self.subbranches.category_scores(log_probabilities)
        return sentences, signals

    def branch_log_probabilities(
        self,
        texts: Sequence[str],
        sentences: np.ndarray,
        queries: Sequence[Mapping[str, float]],
        listing_share: float,
    ) -> np.ndarray:
        """The branch model's (texts x branches) log-probabilities, reading more of unsure listings.

        A listing the title and the description's start leave unsure of its
        branch (below branches.SURE) whose description goes on is encoded
        again over more of it (query.listing_text), and that vector makes
        `listing_share` of the one the model reads: a bare name ("Sunset
        Coil") often says what it is only further on ("this sculptural ring").
        """
        log_probabilities = self.branches.log_probabilities(sentences, queries)
        if not listing_share:
            return log_probabilities
        unsure = {
            row: listing
            for row, listing in enumerate(map(listing_text, texts))
            if listing is not None and np.exp(log_probabilities[row].max()) < SURE
        }
        if not unsure:
            return log_probabilities
        rows = list(unsure)
        listings = self.sentence_embedder.embed(list(unsure.values()))
        mixed = (1.0 - listing_share) * sentences[rows] + listing_share * listings
        log_probabilities[rows] = self.branches.log_probabilities(mixed, [queries[row] for row in rows])
        return log_probabilities

    def _coverage(self, present: dict[str, float], query: dict[str, float]) -> np.ndarray:
        """How much of a category's name the query holds: of the whole name, or of one kind it joins.

        "Silk scarf" covers "Scarves & Shawls" as fully as the fan shop's
        "Scarves". A kind counts only if the title names it (or the
        description repeats it): one word of a long description ("charming")
        would otherwise cover a one-word kind ("Charms & Pendants") in full.
        """
        coverage = self.coverage.scores(present)
        titled = {
            term: weight for term, weight in present.items() if query.get(term, 0.0) >= TITLE_WEIGHT
        }
        np.maximum.at(coverage, self.kind_owners, self.kind_coverage.scores(titled))
        return coverage

    def _lexical_signals(
        self,
        product: str,
        query: dict[str, float],
        translated_weight: float,
        wanted: Callable[[str], bool],
    ) -> dict[str, np.ndarray]:
        """The lexical signals of one product, from its query terms (extended here by translations)."""
        present = {term: 1.0 for term in query}
        translated = self.translations.english_terms(query, translated_weight)
        for word, weight in translated.items():
            query[word] = query.get(word, 0.0) + weight
            present[word] = max(present.get(word, 0.0), min(weight, 1.0))
        signals = {}
        if wanted("name"):
            signals["name"] = self.names.scores(query)
        if wanted("path"):
            signals["path"] = self.paths.scores(query)
        if wanted("coverage") or wanted("parent_coverage"):
            coverage = np.minimum(self._coverage(present, query), 1.0)
            signals["coverage"] = coverage
            if wanted("parent_coverage"):
                signals["parent_coverage"] = self.children.parent_excess(coverage)
        if wanted("regional"):
            signals["regional"] = (
                self.regional.scores(query)
                if names_product_first(product)
                else np.zeros(len(self.ids), dtype=np.float32)
            )
        if wanted("knowledge") or wanted("child_knowledge"):
            knowledge = self.knowledge.scores(query)
            signals["knowledge"] = knowledge
            if wanted("child_knowledge"):
                signals["child_knowledge"] = -self.children.best_child_excess(knowledge)
        head = (
            head_term(product)
            if any(map(wanted, HEAD_SIGNALS))
            else None
        )
        # The same bonus for every field holding the head noun: BM25 of one term
        # would favour the shortest such name ("Pillows" over "Throw Pillows").
        if wanted("head_noun"):
            signals["head_noun"] = _holds(self.names, head, len(self.ids))
        if wanted("knowledge_head"):
            signals["knowledge_head"] = _holds(self.knowledge_terms, head, len(self.ids))
        if wanted("product_head"):
            signals["product_head"] = _holds(self.heads, head, len(self.ids))
        # Google weights no regional head bonus, but reads it to discount the English head.
        if any(map(wanted, ("regional_head", "english_head_discount", "regional_name_discount"))):
            regional_heads = _holds(self.regional_heads, product_first_head(product), len(self.ids))
            if regional_heads.sum() > MAX_REGIONAL_HEAD_CATEGORIES:
                regional_heads[:] = 0.0
            signals["regional_head"] = regional_heads
        if wanted("description_head"):
            signals["description_head"] = _holds(self.heads, description_head(product), len(self.ids))
        if wanted("modifier_head") or wanted("modifier_name_discount"):
            signals["modifier_head"] = _holds(self.modifiers, head, len(self.ids))
        return signals

    def file_services(
        self, fused: np.ndarray, texts: Sequence[str], weights: FusionWeights, leafs_only: bool = False
    ) -> None:
        """File the texts that sell a service (query.offers_service) as services, in place.

        The Services branch gets a bonus where the taxonomy has one; elsewhere
        each leaf's score passes to its parent and the leaves are discounted,
        unless the request asks for leaves.
        """
        if not (weights.service or weights.service_leaf_discount):
            return
        services = np.array([offers_service(text) for text in texts], dtype=bool)
        if not services.any():
            return
        offered = fused[services]
        if weights.service:
            offered += weights.service * self.in_services_branch
        if weights.service_leaf_discount and not leafs_only:
            for row in offered:
                best_leaf = self.children.best_child(np.where(self.leaf_mask, row, -np.inf))
                np.maximum(row, best_leaf, out=row)
                row[self.leaf_mask] *= 1.0 - weights.service_leaf_discount
        fused[services] = offered

    def _add_exemplars(
        self, fused: np.ndarray, sentences: np.ndarray, weights: FusionWeights
    ) -> None:
        """Add the nearest-exemplar score to each row's shortlisted categories, in place."""
        for row, query in zip(fused, sentences):
            shortlist = _top(row, EXEMPLAR_SHORTLIST)
            similarities = self.exemplars.best_similarities(query, shortlist)
            row[shortlist] += weights.exemplar * exemplar_scores(
                similarities, weights.exemplar_margin
            )

    def candidates(
        self, product: str, *, limit: int = DEFAULT_LIMIT, leafs_only: bool = False
    ) -> list[Candidate]:
        """`limit` categories (leaves only if asked), best first, each scored in [0, 1].

        None when the text holds no letter at all (only numbers or symbols).
        """
        return self.candidates_many([product], limit=limit, leafs_only=leafs_only)[0]

    def candidates_many(
        self, products: Sequence[str], *, limit: int = DEFAULT_LIMIT, leafs_only: bool = False
    ) -> list[list[Candidate]]:
        """`candidates()` of each product, computed in batches (cheaper per product)."""
        return [
            candidates
            for start in range(0, len(products), BATCH_SIZE)
            for candidates in self._candidates_batch(
                products[start : start + BATCH_SIZE], limit, leafs_only
            )
        ]

    def _candidates_batch(
        self, products: Sequence[str], limit: int, leafs_only: bool
    ) -> list[list[Candidate]]:
        scored = self._score(products, leafs_only)
        scores = scored.scores
        if leafs_only:
            scores[:, ~self.leaf_mask] = -np.inf
        found: list[list[Candidate]] = [[] for _ in products]
        for position, row in enumerate(scored.rows):
            top = [i for i in _top(scores[row], limit) if np.isfinite(scores[row, i])]
            support = self._support(top, scored, position)
            found[row] = [
                Candidate(
                    self.taxonomy.categories[self.ids[i]],
                    _relevance(float(scores[row, i])),
                    *agreement,
                )
                for i, agreement in zip(top, support)
            ]
        return found

    def _support(
        self, top: list[int], scored: "_Scored", position: int
    ) -> list[tuple[int, int]]:
        """How many independent signals put each candidate, or a relative of it, first,
        and how many put exactly it first (the selector tells a parent from its child).

        Each of the category names (BM25), the sentence similarity to the
        names, the knowledge words and the nearest exemplar votes for its best
        candidate; a vote counts for that candidate's ancestors and descendants
        too, since they agree on the branch. The local selector decides only
        when the evidence agrees (shared/ai/local.py).
        """
        if not top:
            return []
        indices = np.array(top)
        evidence = [
            scored.signals[name][position][indices]
            for name in SUPPORT_SIGNALS
            if name in scored.signals
        ]
        evidence.append(self.exemplars.best_similarities(scored.sentences[position], indices))
        # A signal that finds nothing in any candidate (no word in common) has no vote.
        votes = [int(indices[np.argmax(values)]) for values in evidence if values.max() > 0]
        categories = {i: self.taxonomy.categories[self.ids[i]] for i in top}
        return [
            (sum(categories[i].in_line_with(categories[v]) for v in votes), votes.count(i))
            for i in top
        ]


@dataclass(frozen=True)
class _Scored:
    """Fused scores (every product) and, for the products with letters, what they came from."""

    scores: np.ndarray
    rows: list[int]  # the products scored: those with a letter
    sentences: np.ndarray  # their sentence vectors, in the order of rows
    signals: dict[str, np.ndarray]  # each signal's unweighted scores, in the order of rows


@functools.cache
def use_one_blas_thread() -> None:
    """Keep BLAS to one thread in this process, set once and never toggled.

    The service runs one worker process per core, and these products are too
    small for threads to pay: with OpenBLAS's default of one thread per core,
    a product cost 1.6x the CPU time (7.1 vs 4.1 ms) on the 2-core machine.
    The limit is process-wide, so it is set once, not entered and left around
    each call: request threads toggling it under each other changed BLAS's
    thread count mid-product, and with it the summation order (scores then
    differed by ~4e-8 between threads).
    """
    threadpool_limits(limits=1, user_api="blas")


def exemplar_scores(similarities: np.ndarray, margin: float) -> np.ndarray:
    """The exemplar signal of shortlisted categories from their closest exemplars' similarities.

    With no margin, the similarity (0 if negative). With one, what a
    category's closest exemplar has left of the margin below the closest of
    all: only the categories whose products the listing resembles most score,
    and a category far from it scores 0, however far. Google's listings gain
    on every tuning set with it (docs/classification.md, fourteenth round).
    """
    if not margin:
        return np.maximum(similarities, 0.0)
    if not len(similarities):
        return similarities
    return np.maximum(margin - (similarities.max() - similarities), 0.0)


def _holds(index: TermIndex, term: str | None, size: int) -> np.ndarray:
    """1 for the documents holding `term`, 0 for the others."""
    if term is None:
        return np.zeros(size, dtype=np.float32)
    return (index.scores({term: 1.0}) > 0).astype(np.float32)


def _has_letters(product: str) -> bool:
    return any(char.isalpha() for char in clean(product))


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the `limit` highest scores, highest first, ties by position."""
    limit = min(limit, len(scores))
    if limit <= 0:
        return np.array([], dtype=np.int64)
    part = np.argpartition(-scores, limit - 1)[:limit]
    return part[np.lexsort((part, -scores[part]))]


def _relevance(raw: float) -> float:
    return raw / (raw + SCORE_HALF_POINT)

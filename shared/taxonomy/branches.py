"""Which branch of the taxonomy a listing belongs to, learnt from the product knowledge.

A branch is a top-level category with everything under it, or (the
second-level model) a category at depth 1 with everything under it, a
top-level category standing for itself.

The exemplar titles of the product knowledge are labelled examples (~45,000
for Google, ~80,000 for Shopify), and each category's terms are the words of
its branch. Two models are trained on them at index build, and their
log-probabilities over the top-level branches are added:
- a multinomial logistic regression over the titles' sentence vectors (the
  multilingual encoder's, as the exemplars keep them), which reads
  listings in other languages and phrasing;
- naive Bayes over the words of each branch's titles and terms, its
  log-likelihood averaged over the query's words (so a long description
  does not make it certain) and scaled by WORD_SCALE, counting half
  (WORD_WEIGHT).
The candidates' signal is the log-probability of a category's branch
relative to the likeliest branch, floored at FLOOR: a category in a branch
the listing does not belong to loses, whatever word of its name matched
("fonte" in a cast-iron pan is not Fonts). Training is deterministic: fixed
iterations of full-batch gradient descent from zero weights.
The second-level model (ninth round) is the word model alone: its vector
model cost 12-45 s of build per taxonomy and did no better on the folds.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from shared.taxonomy.lexical import WORD_LIST_SUFFIX, WordMaps
from shared.taxonomy.lowrank import LowRankVectors
from shared.taxonomy.text import is_latin, terms

# Iterations, step and momentum of the gradient descent, and its L2 penalty:
# the training loss has flattened well before 300 iterations on both taxonomies.
ITERATIONS = 300
STEP = 0.5
MOMENTUM = 0.9
L2 = 1e-4
# The least a feature's spread is taken to be when standardising: the real
# rows' spreads are 0.02-0.2; a near-constant feature (a few exemplars) must
# not get a huge weight.
MIN_SCALE = 0.01
# Added to every word count of a branch (Lidstone smoothing).
WORD_SMOOTHING = 0.1
# Latin-script words and the words of other scripts are counted apart (`WordModel`).
SCRIPT_VOCABULARIES = 2
# The words' mean log-likelihood is multiplied by this: about three words'
# worth of evidence, whatever the listing's length.
WORD_SCALE = 3.0
# The word model's log-probabilities count half as much as the vector
# model's: naive Bayes is sure of itself on a single shared word ("silk" in a
# silk scarf is also Fabric > Silk). Chosen on the folds (docs/classification.md).
WORD_WEIGHT = 0.5
# A branch's relative log-probability never goes below this (1 in 1,000).
FLOOR = float(np.log(1e-3))
# A listing whose likeliest branch is at least this probable from its title
# and the description's start is not read further (CandidateIndex reads more
# of the others' descriptions where the taxonomy asks): on dev.jsonl about
# half the listings, keeping nearly all of the gain of reading every one.
SURE = 0.8


@dataclass(frozen=True)
class BranchModel:
    category_branches: np.ndarray  # (categories,) each category's branch, 0..branches-1
    vector_weights: np.ndarray  # (dimensions, branches): a unit sentence vector's logits
    vector_bias: np.ndarray  # (branches,)
    words: "WordModel"

    @classmethod
    def fit(
        cls,
        category_branches: np.ndarray,
        exemplars: LowRankVectors,
        exemplar_categories: np.ndarray,
        category_words: Sequence[Mapping[str, float]],
        with_vectors: bool = True,
    ) -> "BranchModel":
        """Train on the exemplar rows (reduced, with their basis) and each category's word counts.

        Without vectors (the second level's model), only the word model is
        trained: the vector model's weights stay zero, every branch as likely.
        """
        branches = int(category_branches.max()) + 1
        if with_vectors:
            weights, bias = _logistic(
                exemplars.reduced.astype(np.float32),
                category_branches[exemplar_categories],
                branches,
            )
            # The model reads reduced rows; folded into the basis it reads the sentence vector.
            full_weights = exemplars.basis @ weights
            full_bias = bias - exemplars.mean @ full_weights
        else:
            full_weights = np.zeros((exemplars.basis.shape[0], branches), dtype=np.float32)
            full_bias = np.zeros(branches, dtype=np.float32)
        return cls(
            category_branches,
            full_weights.astype(np.float32),
            full_bias.astype(np.float32),
            _word_model(category_branches, category_words, branches),
        )

    def log_probabilities(
        self, sentences: np.ndarray, queries: Sequence[Mapping[str, float]]
    ) -> np.ndarray:
        """(texts x branches) log-probabilities, from the sentence vectors and the query words."""
        by_vector = _log_softmax(sentences @ self.vector_weights + self.vector_bias)
        by_words = np.zeros_like(by_vector)
        for row, query in enumerate(queries):
            evidence = self.words.evidence(query)
            if evidence is not None:
                by_words[row] = WORD_SCALE * evidence / max(sum(query.values()), 1.0)
        return _log_softmax(by_vector + WORD_WEIGHT * _log_softmax(by_words))

    def category_scores(self, log_probabilities: np.ndarray) -> np.ndarray:
        """(texts x categories) each category's branch log-probability relative to the best, floored."""
        relative = log_probabilities - log_probabilities.max(axis=1, keepdims=True)
        return np.maximum(relative, FLOOR)[:, self.category_branches]

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {
            f"{prefix}category_branches": self.category_branches,
            f"{prefix}vector_weights": self.vector_weights,
            f"{prefix}vector_bias": self.vector_bias,
            **self.words.to_arrays(prefix),
        }

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, np.ndarray], prefix: str, word_maps: WordMaps | None = None
    ) -> "BranchModel":
        """The model saved under `prefix`; its word map built by `word_maps` if given."""
        return cls(
            arrays[f"{prefix}category_branches"],
            arrays[f"{prefix}vector_weights"],
            arrays[f"{prefix}vector_bias"],
            WordModel.from_arrays(arrays, prefix, word_maps),
        )


@dataclass(frozen=True)
class WordModel:
    """Naive Bayes log-likelihoods log P(word | branch), stored sparse.

    Latin-script words and the words of other scripts (the knowledge's
    Ukrainian, Russian, Hebrew and Arabic terms, Japanese character pairs) are
    two vocabularies, each with its own totals: adding words in other scripts
    leaves the probabilities of Latin-script words, so the answers to English
    or Spanish listings, as they were. A word seen in no category of a branch
    has its vocabulary's floor there, log(WORD_SMOOTHING / (the branch's total
    of words of that vocabulary + its size x WORD_SMOOTHING));
    one seen there has the floor plus its excess, log(1 + count /
    WORD_SMOOTHING). Most words are seen in a few branches only: the
    second-level model's dense table would be 34-45 MB per taxonomy.
    """

    vocabulary: dict[str, int]  # word -> its row of offsets
    offsets: np.ndarray  # (words + 1,) a word's entries are offsets[row]:offsets[row + 1]
    branches: np.ndarray  # (entries,) the branch of each entry
    excess: np.ndarray  # (entries,)
    floor: np.ndarray  # (vocabularies, branches): Latin-script words, then the others

    def evidence(self, query: Mapping[str, float]) -> np.ndarray | None:
        """The query's weighted sum of log P(word | branch) over its known words; None without one."""
        found = [
            (self.vocabulary[word], weight, _script_vocabulary(word))
            for word, weight in query.items()
            if word in self.vocabulary
        ]
        if not found:
            return None
        script_weights = [0.0] * SCRIPT_VOCABULARIES
        for _, weight, script in found:
            script_weights[script] += weight
        evidence = sum(weight * floor for weight, floor in zip(script_weights, self.floor))
        for row, weight, _ in found:
            start, end = self.offsets[row], self.offsets[row + 1]
            evidence[self.branches[start:end]] += weight * self.excess[start:end]
        return evidence

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {
            f"{prefix}{WORD_LIST_SUFFIX}": np.array(list(self.vocabulary), dtype=str),
            f"{prefix}word_offsets": self.offsets,
            f"{prefix}word_branches": self.branches,
            f"{prefix}word_excess": self.excess,
            f"{prefix}word_floor": self.floor,
        }

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, np.ndarray], prefix: str, word_maps: WordMaps | None = None
    ) -> "WordModel":
        return cls(
            (word_maps or WordMaps()).word_map(arrays, f"{prefix}{WORD_LIST_SUFFIX}"),
            arrays[f"{prefix}word_offsets"],
            arrays[f"{prefix}word_branches"],
            arrays[f"{prefix}word_excess"],
            arrays[f"{prefix}word_floor"],
        )


def title_and_term_words(titles: Sequence[str], names: Sequence[str]) -> dict[str, float]:
    """A category's word counts: its exemplar titles' and its terms' stemmed words."""
    counts: defaultdict[str, float] = defaultdict(float)
    for text in [*titles, *names]:
        for word in terms(text):
            counts[word] += 1.0
    return dict(counts)


def _logistic(rows: np.ndarray, labels: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression on standardised rows; weights and bias for the raw rows.

    Without rows (a taxonomy version without knowledge) every branch is equally likely.
    """
    if len(rows) == 0:
        return np.zeros((rows.shape[1], classes), np.float32), np.zeros(classes, np.float32)
    centre = rows.mean(axis=0)
    scale = np.maximum(rows.std(axis=0), MIN_SCALE)
    features = np.hstack([(rows - centre) / scale, np.ones((len(rows), 1), dtype=np.float32)])
    weights = np.zeros((features.shape[1], classes), dtype=np.float32)
    velocity = np.zeros_like(weights)
    positions = np.arange(len(labels))
    for _ in range(ITERATIONS):
        probabilities = np.exp(_log_softmax(features @ weights))
        probabilities[positions, labels] -= 1.0
        gradient = features.T @ probabilities / len(labels) + L2 * weights
        velocity = MOMENTUM * velocity - STEP * gradient
        weights += velocity
    raw_weights = weights[:-1] / scale[:, None]
    return raw_weights, weights[-1] - centre @ raw_weights


def _word_model(
    category_branches: np.ndarray, category_words: Sequence[Mapping[str, float]], branches: int
) -> WordModel:
    vocabulary: dict[str, int] = {}
    totals: defaultdict[tuple[int, int], float] = defaultdict(float)
    for branch, words in zip(category_branches, category_words):
        for word, count in words.items():
            totals[vocabulary.setdefault(word, len(vocabulary)), int(branch)] += count
    entries = sorted(totals.items())
    rows = np.array([row for (row, _), _ in entries], dtype=np.int64)
    owners = np.array([branch for (_, branch), _ in entries], dtype=np.int64)
    counts = np.array([count for _, count in entries], dtype=np.float64)
    word_vocabulary = np.array([_script_vocabulary(word) for word in vocabulary], dtype=np.int64)
    floor = np.empty((SCRIPT_VOCABULARIES, branches))
    for script in range(SCRIPT_VOCABULARIES):
        own = word_vocabulary[rows] == script
        branch_totals = np.bincount(owners[own], weights=counts[own], minlength=branches)
        size = int((word_vocabulary == script).sum())
        # (Without any word, no query ever reads the floor: one word's worth keeps it finite.)
        floor[script] = np.log(WORD_SMOOTHING / (branch_totals + max(size, 1) * WORD_SMOOTHING))
    return WordModel(
        vocabulary,
        np.searchsorted(rows, np.arange(len(vocabulary) + 1)).astype(np.int64),
        owners.astype(np.int32),
        np.log1p(counts / WORD_SMOOTHING).astype(np.float32),
        floor.astype(np.float32),
    )


def _script_vocabulary(word: str) -> int:
    """0 for a Latin-script word, 1 for another script's."""
    return 0 if is_latin(word) else 1


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

import math

import pytest

from shared.ai.local import (
    CONFIDENCE_COEFFICIENTS,
    CONFIDENCE_INTERCEPT,
    DEFAULT_CONFIDENCE_THRESHOLD,
    MIN_CHILD_VOTES,
    MIN_SUPPORT,
    VOTING_SIGNALS,
    LocalSelector,
    answer,
    confidence,
    evidence,
)
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    CONFIDENCE_NONE,
    ClassificationRequest,
)
from shared.classification.service import Classifier
from shared.taxonomy.models import Candidate, Category
from shared.taxonomy.search import SCORE_HALF_POINT


def category(cid: str, path: str, is_leaf: bool = True) -> Category:
    return Category(cid, path.split(" > ")[-1], path, None, path.count(" > "), is_leaf)


VASES = category("1", "Home > Decor > Vases")
PILLOWS = category("2", "Home > Decor > Pillows")
DECOR = category("3", "Home > Decor", is_leaf=False)
DOG_FOOD = category("5", "Pets > Dog Supplies > Dog Food", is_leaf=False)
DRY_DOG_FOOD = category("6", "Pets > Dog Supplies > Dog Food > Dry Dog Food")


AGREED = MIN_SUPPORT
ALL = VOTING_SIGNALS


def test_confident_when_the_signals_agree_and_the_best_candidate_clearly_leads():
    candidates = [Candidate(VASES, 0.9, ALL, ALL), Candidate(PILLOWS, 0.1)]
    assert LocalSelector().select("vase", candidates, None).category_id == "1"


def test_declines_when_too_few_signals_agree_however_large_the_lead():
    candidates = [Candidate(VASES, 0.9, AGREED - 1, AGREED - 1), Candidate(PILLOWS, 0.1)]
    assert confidence(candidates) == 0.0
    assert LocalSelector().select("vase", candidates, None).category_id is None


def test_declines_when_candidates_are_close():
    # 0.50 and 0.49 are raw scores 60 and 57.6: a lead of 2.4 points.
    candidates = [Candidate(VASES, 0.50, AGREED, 1), Candidate(PILLOWS, 0.49, AGREED, 1)]
    assert LocalSelector().select("thing", candidates, None).category_id is None


def test_an_ancestor_as_runner_up_is_agreement_not_doubt():
    with_parent = [
        Candidate(VASES, 0.6, ALL, ALL), Candidate(DECOR, 0.58, ALL), Candidate(PILLOWS, 0.1)
    ]
    assert evidence(with_parent)["lead"] == evidence([with_parent[0], with_parent[2]])["lead"]
    assert LocalSelector().select("vase", with_parent, None).category_id == "1"


def test_lead_is_counted_in_raw_points():
    # Relevance 0.5 is a raw score of SCORE_HALF_POINT; 0.2 a quarter of it.
    candidates = [Candidate(VASES, 0.5, AGREED), Candidate(PILLOWS, 0.2)]
    lead = SCORE_HALF_POINT - SCORE_HALF_POINT / 4
    assert evidence(candidates)["lead"] == pytest.approx(lead / (lead + SCORE_HALF_POINT))


def test_confidence_is_the_logistic_model_of_the_evidence():
    candidates = [Candidate(VASES, 0.5, 3, 2), Candidate(PILLOWS, 0.3, 1, 1)]
    features = evidence(candidates)
    assert set(features) == set(CONFIDENCE_COEFFICIENTS)
    logit = CONFIDENCE_INTERCEPT + sum(
        CONFIDENCE_COEFFICIENTS[name] * value for name, value in features.items()
    )
    assert confidence(candidates) == pytest.approx(1 / (1 + math.exp(-logit)))


def test_more_lead_and_more_agreement_mean_more_confidence():
    def sure(score: float, support: int, votes: int) -> float:
        return confidence([Candidate(VASES, score, support, votes), Candidate(PILLOWS, 0.3, 1, 1)])

    assert sure(0.6, 3, 2) > sure(0.45, 3, 2)
    assert sure(0.5, ALL, ALL) > sure(0.5, AGREED, 1)


def test_a_child_that_more_signals_name_is_the_answer():
    candidates = [
        Candidate(DOG_FOOD, 0.6, ALL, 1),
        Candidate(DRY_DOG_FOOD, 0.58, ALL, 3),
        Candidate(PILLOWS, 0.1),
    ]
    assert answer(candidates).category == DRY_DOG_FOOD
    assert LocalSelector(threshold=0.0).select("kibble", candidates, None).category_id == "6"


def test_a_parent_keeps_the_answer_when_its_child_is_named_no_more():
    tied = [Candidate(DOG_FOOD, 0.6, ALL, 2), Candidate(DRY_DOG_FOOD, 0.58, ALL, 2)]
    assert answer(tied).category == DOG_FOOD
    # One signal alone does not make the child the answer.
    lone = [Candidate(DOG_FOOD, 0.6, 2, 0), Candidate(DRY_DOG_FOOD, 0.58, 2, MIN_CHILD_VOTES - 1)]
    assert answer(lone).category == DOG_FOOD
    # A child of another branch is not a more specific answer.
    other = [Candidate(DECOR, 0.6, ALL, 1), Candidate(DRY_DOG_FOOD, 0.58, 1, 3)]
    assert answer(other).category == DECOR


def test_threshold_setting_and_default():
    candidates = [Candidate(VASES, 0.9, ALL, ALL), Candidate(PILLOWS, 0.1)]
    assert LocalSelector(threshold=0.9999).select("vase", candidates, None).category_id is None
    assert LocalSelector().threshold == DEFAULT_CONFIDENCE_THRESHOLD


def test_custom_instructions_are_ignored():
    candidates = [Candidate(VASES, 0.9, ALL, ALL), Candidate(PILLOWS, 0.1)]
    selector = LocalSelector()
    assert selector.select("vase", candidates, "Always pick pillows") == selector.select(
        "vase", candidates, None
    )


def test_no_candidates_no_decision():
    assert LocalSelector().select("vase", [], None).category_id is None


class FixedIndex:
    """Stands in for CandidateIndex: always the same two weak, close candidates."""

    def candidates(self, product, *, limit=15, leafs_only=False):
        return [Candidate(VASES, 0.30, AGREED, 1), Candidate(PILLOWS, 0.29, AGREED, 1)][:limit]


def test_fallback_through_the_classifier():
    classifier = Classifier({"Google": FixedIndex()}, LocalSelector(), candidate_count=15)
    declined = classifier.classify(ClassificationRequest("thing", "Google"))
    assert (declined.category, declined.confidence) == (None, CONFIDENCE_NONE)
    guessed = classifier.classify(
        ClassificationRequest("thing", "Google", fallback_to_best_guess=True)
    )
    assert (guessed.category, guessed.confidence) == (VASES, CONFIDENCE_FALLBACK)


def test_confident_answer_through_the_classifier():
    classifier = Classifier({"Google": FixedIndex()}, LocalSelector(threshold=0.0), 15)
    result = classifier.classify(ClassificationRequest("thing", "Google"))
    assert (result.category, result.confidence) == (VASES, CONFIDENCE_AI)

import pytest

from shared.ai.local import DEFAULT_CONFIDENCE_THRESHOLD, MIN_SUPPORT, LocalSelector, confidence
from shared.classification.models import (
    CONFIDENCE_AI,
    CONFIDENCE_FALLBACK,
    CONFIDENCE_NONE,
    ClassificationRequest,
)
from shared.classification.service import Classifier
from shared.taxonomy.models import Candidate, Category
from shared.taxonomy.search import SCORE_HALF_POINT


def category(cid: str, path: str) -> Category:
    return Category(cid, path.split(" > ")[-1], path, None, path.count(" > "), True)


VASES = category("1", "Home > Decor > Vases")
PILLOWS = category("2", "Home > Decor > Pillows")
DECOR = category("3", "Home > Decor")


AGREED = MIN_SUPPORT


def test_confident_when_the_signals_agree_and_the_best_candidate_clearly_leads():
    candidates = [Candidate(VASES, 0.9, AGREED), Candidate(PILLOWS, 0.1)]
    assert LocalSelector().select("vase", candidates, None).category_id == "1"


def test_declines_when_too_few_signals_agree_however_large_the_lead():
    candidates = [Candidate(VASES, 0.9, AGREED - 1), Candidate(PILLOWS, 0.1)]
    assert LocalSelector().select("vase", candidates, None).category_id is None


def test_declines_when_candidates_are_close():
    # 0.70 and 0.69 are raw scores 140 and 133.5: a lead of 6.5 points.
    candidates = [Candidate(VASES, 0.70, AGREED), Candidate(PILLOWS, 0.69, AGREED)]
    assert LocalSelector().select("thing", candidates, None).category_id is None


def test_an_ancestor_as_runner_up_is_agreement_not_doubt():
    with_parent = [
        Candidate(VASES, 0.6, AGREED), Candidate(DECOR, 0.58, AGREED), Candidate(PILLOWS, 0.1)
    ]
    assert LocalSelector().select("vase", with_parent, None).category_id == "1"


def test_confidence_is_the_lead_in_raw_points():
    # Relevance 0.5 is a raw score of SCORE_HALF_POINT; 0.2 a quarter of it.
    candidates = [Candidate(VASES, 0.5, AGREED), Candidate(PILLOWS, 0.2)]
    lead = SCORE_HALF_POINT - SCORE_HALF_POINT / 4
    assert confidence(candidates) == pytest.approx(lead / (lead + SCORE_HALF_POINT))


def test_threshold_setting_and_default():
    candidates = [Candidate(VASES, 0.9, AGREED), Candidate(PILLOWS, 0.1)]
    assert LocalSelector(threshold=0.99).select("vase", candidates, None).category_id is None
    assert LocalSelector().threshold == DEFAULT_CONFIDENCE_THRESHOLD


def test_custom_instructions_are_ignored():
    candidates = [Candidate(VASES, 0.9, AGREED), Candidate(PILLOWS, 0.1)]
    selector = LocalSelector()
    assert selector.select("vase", candidates, "Always pick pillows") == selector.select(
        "vase", candidates, None
    )


def test_no_candidates_no_decision():
    assert LocalSelector().select("vase", [], None).category_id is None


class FixedIndex:
    """Stands in for CandidateIndex: always the same two weak, close candidates."""

    def candidates(self, product, *, limit=15, leafs_only=False):
        return [Candidate(VASES, 0.30, AGREED), Candidate(PILLOWS, 0.29, AGREED)][:limit]


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

import numpy as np

from shared.taxonomy.lexical import WordMaps, bm25_index, coverage_index

MUGS = {"mug": 2.0, "ceram": 1.0}
PLATES = {"plate": 2.0, "ceram": 1.0, "dinner": 1.0, "set": 1.0}


def test_bm25_ranks_the_document_the_query_matches_best():
    scores = bm25_index([MUGS, PLATES]).scores({"mug": 1.0, "ceram": 1.0})
    assert scores[0] > scores[1] > 0


def test_a_longer_document_weighs_a_shared_term_less():
    scores = bm25_index([MUGS, PLATES]).scores({"ceram": 1.0})
    assert scores[0] > scores[1]


def test_terms_in_other_scripts_do_not_lengthen_a_document():
    # Translations (Russian, Japanese) restate the English name: a Latin-script
    # listing must score the category as if they were not there.
    translated = {**MUGS, "кружк": 1.0, "マグ": 1.0, "カッ": 1.0}
    plain = bm25_index([MUGS, PLATES]).scores({"ceram": 1.0, "mug": 1.0})
    with_translations = bm25_index([translated, PLATES]).scores({"ceram": 1.0, "mug": 1.0})
    np.testing.assert_array_equal(plain, with_translations)
    assert bm25_index([translated, PLATES]).scores({"кружк": 1.0})[0] > 0


def test_coverage_is_one_for_a_query_holding_the_whole_name():
    scores = coverage_index([MUGS, PLATES]).scores({"mug": 1.0, "ceram": 1.0})
    assert np.isclose(scores[0], 1.0)
    assert 0 < scores[1] < 1


def test_word_maps_share_one_object_per_word_and_row_number():
    maps = WordMaps()
    many = [f"word{n}" for n in range(300)]
    first = maps.word_map(many)
    second = maps.word_map(["".join(["word", "299"]), "other"])  # an equal, distinct string
    assert first == {word: row for row, word in enumerate(many)}
    assert second == {"word299": 0, "other": 1}
    shared_word = next(iter(second))
    assert shared_word is next(word for word in first if word == "word299")
    assert maps.word_map(many[::-1])["word0"] is first["word299"]  # row 299, one int object

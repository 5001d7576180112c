import numpy as np

from shared.taxonomy.lexical import WordMaps, bm25_index, coverage_index, share_words

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


def test_shared_word_lists_read_back_as_the_same_maps_with_one_object_per_word():
    many = [f"word{n}" for n in range(300)]
    saved = {
        "a_vocabulary": np.array(many, dtype=str),
        "b_vocabulary": np.array(["word299", "другое", "word5"], dtype=str),
        "a_weights": np.ones(3, dtype=np.float32),
    }
    shared = share_words(saved)
    assert "a_vocabulary" not in shared and shared["a_weights"] is saved["a_weights"]
    maps = WordMaps(shared)
    first, second = maps.word_map(shared, "a_vocabulary"), maps.word_map(shared, "b_vocabulary")
    unshared = WordMaps()
    assert first == unshared.word_map(saved, "a_vocabulary") == {w: n for n, w in enumerate(many)}
    assert second == {"word299": 0, "другое": 1, "word5": 2}
    assert next(iter(second)) is next(word for word in first if word == "word299")
    reversed_list = {"c_vocabulary": np.array(many[::-1], dtype=str)}
    assert maps.word_map(reversed_list, "c_vocabulary")["word0"] is first["word299"]  # one int
    # The same word list, saved twice, gives one map.
    assert maps.word_map(shared, "a_vocabulary") is first
    assert maps.word_map(reversed_list, "c_vocabulary") is not first

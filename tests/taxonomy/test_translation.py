from shared.taxonomy.text import terms
from shared.taxonomy.translation import Translations

ENGLISH = {"1": "Dog Beds", "2": "Cat Beds", "3": "Dog Toys", "4": "Cat Toys"}
LOCALIZED = {
    "es": {"1": "Camas para perros", "2": "Camas para gatos", "3": "Juguetes para perros"},
    "fr": {"1": "Lits pour chiens", "2": "Lits pour chats", "4": "Jouets pour chats"},
    "ja": {"1": "犬用ベッド"},  # not a translated language: ignored
}


def _stem(word: str) -> str:
    return terms(word)[0]


def test_foreign_words_translate_to_the_english_words_of_the_same_categories():
    table = Translations.build(ENGLISH, LOCALIZED).table
    assert table[_stem("camas")] == (_stem("beds"),)
    assert table[_stem("lits")] == (_stem("beds"),)
    assert table[_stem("perros")] == (_stem("dog"),)


def test_words_seen_once_are_not_translated():
    table = Translations.build(ENGLISH, LOCALIZED).table
    assert _stem("juguetes") not in table


def test_english_terms_weigh_the_foreign_terms_weight():
    translations = Translations({"cama": ("bed",), "gato": ("cat",)})
    assert translations.english_terms({"cama": 1.0, "gato": 0.3, "azul": 1.0}, 0.5) == {
        "bed": 0.5,
        "cat": 0.15,
    }


def test_table_survives_the_cache_arrays():
    translations = Translations.build(ENGLISH, LOCALIZED)
    assert Translations.from_arrays(translations.to_arrays("t_"), "t_") == translations
    assert Translations.from_arrays(Translations({}).to_arrays("t_"), "t_") == Translations({})

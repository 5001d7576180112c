import pytest

from shared.taxonomy.text import clean, terms


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Florero de CERÁMICA", "florero de ceramica"),
        ("Čajová konvice", "cajova konvice"),
        ("Crème brûlée naïve", "creme brulee naive"),
        # Vietnamese stacks two marks; Greek and Hebrew marks fold away too.
        ("Bàn chải đánh răng", "ban chai đanh rang"),
        ("Κρέμα προσώπου", "κρεμα προσωπου"),
        ("שָׁלוֹם", "שלום"),
        # Part of the letter, not an accent: Ukrainian й and ї, Japanese voicing marks.
        ("Зміцнювальний крем, їжа", "зміцнювальний крем, їжа"),
        ("ブラック", "ブラック"),
        ("Mug &amp;quot;Blue&amp;quot; <b>350 ml</b>", 'mug "blue"  350 ml '),
    ],
)
def test_clean_lowers_folds_accents_and_drops_entities_and_tags(text, cleaned):
    assert clean(text) == cleaned


def test_terms_are_stemmed_content_words_without_numbers_or_stop_words():
    assert terms("The Ceramic Mugs for 2 cups, SKU-123") == ["ceram", "mug", "cup", "sku"]


def test_a_product_named_by_its_agent_noun_keeps_the_er():
    # Snowball alone makes a windbreaker a windbreak and a comforter "comfort".
    assert terms("Windbreakers") == terms("windbreaker") == ["windbreaker"]
    assert terms("windbreak") != terms("windbreaker")
    assert terms("Queen comforter set") == ["queen", "comforter"]
    assert terms("Voice Recorders, records, controllers") == ["voic", "recorder", "record", "controller"]
    assert terms("paper dryers") == ["paper", "dryer"]


def test_irregular_plurals_are_their_singular():
    assert terms("Kitchen Knives, Bookshelves, Scarves, Mice, Teeth") == terms(
        "kitchen knife, bookshelf, scarf, mouse, tooth"
    )


def test_what_a_product_is_without_is_not_a_term():
    assert terms("Zapatillas sin Cordones para Bebé") == terms("zapatillas bebé")
    assert terms("Sutiã sem alças") == terms("sutiã")
    assert terms("Mug without the lid, blue") == terms("mug blue")
    # An article is skipped, a sentence's end or another script ends the "without".
    assert terms("Tasse ohne den Deckel") == terms("Tasse")
    assert terms("Чашка без кришки") == terms("Чашка")
    assert terms("Mug without. Lid sold separately") == terms("mug lid sold separately")


def test_cyrillic_words_are_stemmed_as_russian():
    assert terms("Кремы для лица") == terms("крем лицо")


def test_hebrew_and_arabic_words_are_terms():
    assert terms("סרום לפנים") == ["סרום", "לפנים"]
    assert len(terms("سيروم للوجه")) == 2


def test_unspaced_scripts_are_read_as_overlapping_character_pairs():
    # Japanese: "pressure IH rice cooker"; Latin words inside the run are words.
    assert terms("圧力IH炊飯器") == ["圧力", "ih", "炊飯", "飯器"]
    assert terms("靴") == ["靴"]
    assert set(terms("炊飯器・蒸し器")) >= set(terms("炊飯器"))

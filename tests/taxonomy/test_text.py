import pytest

from shared.taxonomy.text import clean, terms


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Florero de CERÁMICA", "florero de ceramica"),
        ("Čajová konvice", "cajova konvice"),
        ("Crème brûlée naïve", "creme brulee naive"),
        # Combining marks outside Latin: Vietnamese stacks two, Cyrillic й decomposes.
        ("Bàn chải đánh răng", "ban chai đanh rang"),
        ("Зміцнювальний крем", "зміцнювальнии крем"),
        ("Mug &amp;quot;Blue&amp;quot; <b>350 ml</b>", 'mug "blue"  350 ml '),
    ],
)
def test_clean_lowers_folds_accents_and_drops_entities_and_tags(text, cleaned):
    assert clean(text) == cleaned


def test_terms_are_stemmed_content_words_without_numbers_or_stop_words():
    assert terms("The Ceramic Mugs for 2 cups, SKU-123") == ["ceram", "mug", "cup", "sku"]

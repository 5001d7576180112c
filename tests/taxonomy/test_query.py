import pytest

from shared.taxonomy.query import head_term
from shared.taxonomy.text import terms


@pytest.mark.parametrize(
    ("product", "head"),
    [
        ("Croscill Everly Silver Euro Sham", "sham"),
        ("Wooded River Stampede Sham - Euro 26x26\nA sham for your pillows", "sham"),
        ("Tailored Valance with Band", "valance"),
        ("Abe Lincoln Coffee Mug, Blue", "mug"),
        ("Ceramic Mug (350 ml)", "mug"),
        ("Florero para muro grande", "florero"),
        ("Dog Bed for Large Dogs", "bed"),
        ("Anime Flame Sword T-Shirt — Epic Fire Warrior Graphic Tee", "shirt"),
        ("Mega Gengar ex card: Phantasmal Flames", "card"),
    ],
)
def test_head_term_is_the_last_term_before_the_title_goes_on(product, head):
    assert head_term(product) == terms(head)[0]


def test_head_term_reads_the_title_only():
    assert head_term("Blue Mug\nA sham") == terms("mug")[0]


def test_head_term_of_a_title_without_terms_is_none():
    assert head_term("12345 - 67\nCeramic mug") is None

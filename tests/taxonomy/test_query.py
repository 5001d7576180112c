import pytest

from shared.taxonomy.query import SPECIFICATION_WEIGHT, TITLE_WEIGHT, head_term, query_terms
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
        ("Samsung T7 Portable SSD 1TB", "ssd"),
        ("Flexzilla Garden Hose 50 ft with Spray Nozzle", "hose"),
        ("Crucial 16GB DDR4 RAM", "ram"),
    ],
)
def test_head_term_is_the_last_term_before_the_title_goes_on(product, head):
    assert head_term(product) == terms(head)[0]


def test_head_term_reads_the_title_only():
    assert head_term("Blue Mug\nA sham") == terms("mug")[0]


def test_head_term_of_a_title_without_terms_is_none():
    assert head_term("12345 - 67\nCeramic mug") is None


@pytest.mark.parametrize(
    "product", ["Apple MacBook Air 13-inch M2 8GB RAM", "Lenovo IdeaPad 15.6in 512 GB SSD"]
)
def test_a_specification_after_a_quantity_is_no_head_term(product):
    # The laptop is no RAM: its noun is elsewhere in the title.
    assert head_term(product) is None


def test_specification_words_weigh_less_than_the_product_words():
    weights = query_terms("Apple MacBook Air 8GB RAM")
    (ram,) = terms("RAM")
    (macbook,) = terms("MacBook")
    assert weights[ram] == SPECIFICATION_WEIGHT < weights[macbook] == TITLE_WEIGHT

import pytest

from shared.taxonomy.documents import (
    build_documents,
    heads_document,
    knowledge_terms_document,
    modifiers_document,
    name_kinds,
)
from shared.taxonomy.knowledge.store import Knowledge
from shared.taxonomy.models import Category, Taxonomy
from shared.taxonomy.text import terms

CHARMS = Category("1", "Wine Glass Charms", "Barware > Wine Glass Charms", None, 1, True)


def stems(text: str) -> set[str]:
    return set(terms(text))


def test_the_words_qualifying_a_category_s_products_are_its_modifiers():
    knowledge = Knowledge(terms=["drink markers", "stemware charms"])
    assert set(modifiers_document(CHARMS, knowledge)) == stems("wine glass drink stemware")
    assert set(heads_document(CHARMS, knowledge)) == stems("charms markers")


def test_a_word_heading_another_phrase_of_the_category_is_no_modifier():
    # Its knowledge also says "wine glass": a glass is sold there too.
    knowledge = Knowledge(terms=["wine glass"])
    assert stems("glass") <= set(heads_document(CHARMS, knowledge))
    assert set(modifiers_document(CHARMS, knowledge)) == stems("wine")


def test_head_and_modifier_documents_hold_latin_script_words_only():
    # A title's head noun is a Latin-script word; "для" phrases head nothing.
    knowledge = Knowledge(terms=["drink markers", "підвіска для келиха", "מתלה לכוס"])
    assert set(heads_document(CHARMS, knowledge)) == stems("charms markers")
    assert set(modifiers_document(CHARMS, knowledge)) == stems("wine glass drink")
    assert set(knowledge_terms_document(CHARMS, knowledge)) == stems("wine glass charms drink markers")


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("Scarves & Shawls", ["Scarves", "Shawls"]),
        ("Food, Beverages & Tobacco", ["Food", "Beverages", "Tobacco"]),
        # A word the parts share is lent to the single-word parts.
        ("Pet Vitamins & Supplements", ["Pet Vitamins", "Pet Supplements"]),
        ("Laser & IPL Hair Removal Devices", ["Laser Hair Removal Devices", "IPL Hair Removal Devices"]),
        # Which words two longer parts share is not clear: the name stays whole.
        ("Medical Needle & Syringe Sets", ["Medical Needle & Syringe Sets"]),
        ("Mobile Phones", ["Mobile Phones"]),
    ],
)
def test_a_name_is_split_into_the_kinds_of_product_it_joins(name, kinds):
    assert name_kinds(name) == kinds


def test_kinds_are_a_category_s_own_and_whole(tmp_path):
    lines = [
        ("1", "Home & Garden", None),
        ("2", "Home & Garden > Pen & Pencil Sets", "1"),
        ("3", "Home & Garden > Scarves & Shawls", "1"),
        ("4", "Home & Garden > Scarves & Shawls > Shawls", "3"),
    ]
    categories = {
        id_: Category(id_, path.split(" > ")[-1], path, parent, path.count(" > "), id_ in "24")
        for id_, path, parent in lines
    }
    documents = build_documents(Taxonomy("Google", "test", categories), tmp_path)
    kinds = {id_: [set(kind) for kind in document.kinds] for id_, document in zip(categories, documents)}
    # A department joins departments; "Pen Sets" would read "pen" alone.
    assert kinds["1"] == [] and kinds["2"] == []
    # The child "Shawls" holds the shawls; a scarf is this category's own kind.
    assert kinds["3"] == [stems("scarf")]

"""The writers' worklists: what each category's context shows."""

from pathlib import Path

from shared.taxonomy.files import load_taxonomy
from shared.taxonomy.knowledge.store import Knowledge
from shared.taxonomy.knowledge.worklist import children_by_parent, describe_parent, parents

FIXTURES = Path(__file__).parent / "data"


def test_parents_are_the_categories_with_children_below_the_top_level():
    taxonomy = load_taxonomy(FIXTURES, "Google")
    listed = [c.name for c in parents(taxonomy, children_by_parent(taxonomy))]
    assert listed[:3] == ["Pet Supplies", "Dog Supplies", "Cat Supplies"]
    assert "Animals & Pet Supplies" not in listed  # top level
    assert "Dog Beds" not in listed  # a leaf


def test_a_parent_shows_its_children_theirs_and_what_is_already_written():
    taxonomy = load_taxonomy(FIXTURES, "Google")
    pet_supplies = taxonomy.categories["2"]
    record = Knowledge(titles=["Pet Starter Kit"], terms=["pet supplies"])
    text = describe_parent(pet_supplies, children_by_parent(taxonomy), record)
    assert text.splitlines() == [
        "### 2 | Animals & Pet Supplies > Pet Supplies",
        "children: Dog Supplies (Dog Beds; Dog Toys) | Cat Supplies (Cat Toys)",
        "already written for this level: titles: Pet Starter Kit || terms: pet supplies",
    ]

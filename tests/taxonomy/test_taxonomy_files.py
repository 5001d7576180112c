import os
from pathlib import Path

import pytest

from shared.taxonomy.errors import (
    TaxonomyError,
    TaxonomyFileInvalid,
    TaxonomyFileMissing,
    UnknownTaxonomy,
)
from shared.taxonomy.files import load_taxonomy
from shared.taxonomy.models import Category

REFERENCE_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "taxonomies"


def test_google_version_ids_and_tree(taxonomy_dir: Path):
    taxonomy = load_taxonomy(taxonomy_dir, "Google")
    assert taxonomy.name == "Google"
    assert taxonomy.version == "2030-01-02"
    assert len(taxonomy) == 20
    beds = taxonomy.get("4")
    assert beds.name == "Dog Beds"
    assert beds.path == "Animals & Pet Supplies > Pet Supplies > Dog Supplies > Dog Beds"
    assert (beds.parent_id, beds.depth, beds.is_leaf) == ("3", 3, True)
    top = taxonomy.get("1")
    assert (top.parent_id, top.depth, top.is_leaf) == (None, 0, False)


def test_shopify_ids_are_short_handles(taxonomy_dir: Path):
    taxonomy = load_taxonomy(taxonomy_dir, "Shopify")
    assert taxonomy.version == "2031-07"
    assert all(not cid.startswith("gid://") for cid in taxonomy.categories)
    helmets = taxonomy.get("sg-1-2")
    assert helmets.name == "Bicycle Helmets"
    assert (helmets.parent_id, helmets.depth, helmets.is_leaf) == ("sg-1", 2, True)
    assert taxonomy.get("sg-1").is_leaf is False


def test_missing_file_names_the_path(tmp_path: Path):
    with pytest.raises(TaxonomyFileMissing) as error:
        load_taxonomy(tmp_path, "Shopify")
    assert str(tmp_path / "shopify" / "categories.txt") in str(error.value)
    assert isinstance(error.value, TaxonomyError)


def test_unparseable_line_is_reported_with_its_number(tmp_path: Path):
    path = tmp_path / "google" / "taxonomy-with-ids.en-US.txt"
    path.parent.mkdir()
    path.write_text("# Google_Product_Taxonomy_Version: 1\n1 - Toys\nnot a category line\n")
    with pytest.raises(TaxonomyFileInvalid, match=":3"):
        load_taxonomy(tmp_path, "Google")


def test_orphan_category_is_invalid(tmp_path: Path):
    path = tmp_path / "google" / "taxonomy-with-ids.en-US.txt"
    path.parent.mkdir()
    path.write_text("2 - Toys > Dolls\n")
    with pytest.raises(TaxonomyFileInvalid, match="no parent"):
        load_taxonomy(tmp_path, "Google")


def test_unknown_taxonomy_name(taxonomy_dir: Path):
    with pytest.raises(UnknownTaxonomy):
        load_taxonomy(taxonomy_dir, "Amazon")


def reference_dir() -> Path:
    """The real taxonomy files: TAXONOMY_DIR, else the reference folder beside the repo."""
    configured = os.environ.get("TAXONOMY_DIR")
    return Path(configured) if configured else REFERENCE_DIR


@pytest.mark.skipif(not (reference_dir() / "google").is_dir(), reason="no reference taxonomies")
def test_real_files_parse_with_their_versions():
    google = load_taxonomy(reference_dir(), "Google")
    shopify = load_taxonomy(reference_dir(), "Shopify")
    assert google.version == "2021-09-21" and len(google) == 5595
    assert shopify.version == "2025-08-unstable" and len(shopify) == 10595
    assert shopify.get("aa-1-1").path.startswith("Apparel & Accessories > Clothing")


def test_in_line_with_is_the_same_branch_not_a_shared_name_prefix():
    decor = Category("1", "Decor", "Home > Decor", "0", 1, False)
    vases = Category("2", "Vases", "Home > Decor > Vases", "1", 2, True)
    decor_lights = Category("3", "Decor Lights", "Home > Decor Lights", "0", 1, True)
    assert vases.in_line_with(decor) and decor.in_line_with(vases) and vases.in_line_with(vases)
    assert not decor.in_line_with(decor_lights) and not decor_lights.in_line_with(decor)

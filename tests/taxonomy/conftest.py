"""Small taxonomies written for the tests, copied to a temporary TAXONOMY_DIR."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from shared.taxonomy.service import load_index

DATA = Path(__file__).resolve().parent / "data"
SPANISH_NAMES = {
    "hg-1-2": "Hogar y jardín > Decoración > Floreros",
    "sg-1-2": "Artículos deportivos > Ciclismo > Cascos de bicicleta",
}


@pytest.fixture
def taxonomy_dir(tmp_path: Path) -> Path:
    """The fixture files plus a Spanish translation of two Shopify categories."""
    directory = tmp_path / "taxonomies"
    shutil.copytree(DATA, directory)
    localized = directory / "shopify" / "localized"
    localized.mkdir()
    lines = ["# Shopify Product Taxonomy - Categories: 2031-07", ""] + [
        f"gid://shopify/TaxonomyCategory/{handle} : {path}"
        for handle, path in SPANISH_NAMES.items()
    ]
    with gzip.open(localized / "categories.es.txt.gz", "wt", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return directory


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def google_index(taxonomy_dir: Path, cache_dir: Path):
    return load_index(taxonomy_dir, "Google", cache_dir)


@pytest.fixture
def shopify_index(taxonomy_dir: Path, cache_dir: Path):
    return load_index(taxonomy_dir, "Shopify", cache_dir)

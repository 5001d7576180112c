from pathlib import Path

import pytest

from shared.taxonomy import service


def test_second_load_reads_the_cache(taxonomy_dir: Path, cache_dir: Path, monkeypatch):
    first = service.load_index(taxonomy_dir, "Google", cache_dir)
    assert len(list(cache_dir.glob("google-*.npz"))) == 1

    def no_build(*args):
        pytest.fail("the index was rebuilt although the cache is valid")

    monkeypatch.setattr(service, "build_arrays", no_build)
    second = service.load_index(taxonomy_dir, "Google", cache_dir)
    assert second.candidates("dog bed") == first.candidates("dog bed")


def test_changed_file_invalidates_the_cache(taxonomy_dir: Path, cache_dir: Path):
    service.load_index(taxonomy_dir, "Shopify", cache_dir)
    path = taxonomy_dir / "shopify" / "categories.txt"
    path.write_text(
        path.read_text()
        + "gid://shopify/TaxonomyCategory/sg-1-3 : Sporting Goods > Cycling > Bicycle Bells\n"
    )
    index = service.load_index(taxonomy_dir, "Shopify", cache_dir)
    assert len(list(cache_dir.glob("shopify-*.npz"))) == 2
    assert index.candidates("Brass bicycle bell")[0].category.id == "sg-1-3"


def test_unreadable_cache_entry_is_rebuilt(taxonomy_dir: Path, cache_dir: Path):
    service.load_index(taxonomy_dir, "Google", cache_dir)
    (entry,) = cache_dir.glob("google-*.npz")
    entry.write_bytes(b"not an archive")
    index = service.load_index(taxonomy_dir, "Google", cache_dir)
    assert index.candidates("dog bed")[0].category.id == "4"

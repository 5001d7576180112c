"""Parse the two official taxonomy files into `Taxonomy` values.

Google: `taxonomy-with-ids.<locale>.txt`, a `# Google_Product_Taxonomy_Version: X`
header, then `ID - Path` lines. Shopify: `categories.txt`, a
`# Shopify Product Taxonomy - Categories: X` header, then
`gid://shopify/TaxonomyCategory/<handle> : Path` lines. Both list parents
before children, and the path alone tells the tree: a category's parent is the
category whose path is its path minus the last segment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from shared.taxonomy.errors import TaxonomyFileInvalid, TaxonomyFileMissing, UnknownTaxonomy
from shared.taxonomy.models import PATH_SEPARATOR, Category, Taxonomy

GOOGLE = "Google"
SHOPIFY = "Shopify"
GOOGLE_FILE = Path("google") / "taxonomy-with-ids.en-US.txt"
SHOPIFY_FILE = Path("shopify") / "categories.txt"
SHOPIFY_JSON_FILE = Path("shopify") / "categories.json"
SHOPIFY_TO_GOOGLE_FILE = Path("shopify") / "shopify_to_google.tsv"
SHOPIFY_LOCALIZED_DIR = Path("shopify") / "localized"

UNKNOWN_VERSION = "unknown"
GOOGLE_VERSION = re.compile(r"^#\s*Google_Product_Taxonomy_Version:\s*(\S+)")
SHOPIFY_VERSION = re.compile(r"^#\s*Shopify Product Taxonomy - Categories:\s*(\S+)")
GOOGLE_LINE = re.compile(r"^(\d+)\s+-\s+(.+)$")
SHOPIFY_LINE = re.compile(r"^gid://shopify/TaxonomyCategory/(\S+)\s*:\s*(.+)$")


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaxonomyFileMissing(path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaxonomyFileInvalid(path, str(exc)) from exc


def parse_google(text: str, path: Path) -> Taxonomy:
    return _parse(GOOGLE, text, path, GOOGLE_VERSION, GOOGLE_LINE)


def parse_shopify(text: str, path: Path) -> Taxonomy:
    return _parse(SHOPIFY, text, path, SHOPIFY_VERSION, SHOPIFY_LINE)


def taxonomy_file(taxonomy_dir: Path, name: str) -> Path:
    if name not in TAXONOMY_FILES:
        raise UnknownTaxonomy(name, tuple(TAXONOMY_FILES))
    return taxonomy_dir / TAXONOMY_FILES[name]


def load_taxonomy(taxonomy_dir: Path, name: str) -> Taxonomy:
    """The taxonomy `name` ("Google" or "Shopify") read from its file in `taxonomy_dir`."""
    path = taxonomy_file(taxonomy_dir, name)
    return PARSERS[name](read_text(path), path)


def parse_shopify_lines(text: str) -> Iterable[tuple[str, str]]:
    """(handle, path) pairs of a Shopify categories file, in any language."""
    for line in text.splitlines():
        match = SHOPIFY_LINE.match(line.strip())
        if match:
            yield match.group(1), match.group(2).strip()


def _parse(
    name: str, text: str, path: Path, version_pattern: re.Pattern, line_pattern: re.Pattern
) -> Taxonomy:
    version = UNKNOWN_VERSION
    entries: list[tuple[str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            found = version_pattern.match(line)
            if found and version == UNKNOWN_VERSION:
                version = found.group(1)
            continue
        match = line_pattern.match(line)
        if not match:
            raise TaxonomyFileInvalid(path, f"unexpected line {line[:80]!r}", number)
        entries.append((match.group(1), match.group(2).strip()))
    if not entries:
        raise TaxonomyFileInvalid(path, "no categories found")
    return Taxonomy(name=name, version=version, categories=_build_tree(entries, path))


def _build_tree(entries: list[tuple[str, str]], path: Path) -> dict[str, Category]:
    id_by_path = {category_path: category_id for category_id, category_path in entries}
    parent_paths = {
        category_path.rsplit(PATH_SEPARATOR, 1)[0]
        for _, category_path in entries
        if PATH_SEPARATOR in category_path
    }
    categories: dict[str, Category] = {}
    for category_id, category_path in entries:
        segments = category_path.split(PATH_SEPARATOR)
        parent_id = None
        if len(segments) > 1:
            parent_path = PATH_SEPARATOR.join(segments[:-1])
            parent_id = id_by_path.get(parent_path)
            if parent_id is None:
                raise TaxonomyFileInvalid(path, f"no parent category for {category_path!r}")
        categories[category_id] = Category(
            id=category_id,
            name=segments[-1],
            path=category_path,
            parent_id=parent_id,
            depth=len(segments) - 1,
            is_leaf=category_path not in parent_paths,
        )
    return categories


TAXONOMY_FILES = {GOOGLE: GOOGLE_FILE, SHOPIFY: SHOPIFY_FILE}
PARSERS = {GOOGLE: parse_google, SHOPIFY: parse_shopify}

"""`taxonomist taxonomies fetch DIR`: download the official taxonomy files.

Each file is downloaded, parsed like the service will parse it, and only
then moved into place, so a failed or partial download never replaces a
good file.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import httpx

from shared.taxonomy.errors import TaxonomyError
from shared.taxonomy.files import GOOGLE, GOOGLE_FILE, SHOPIFY, SHOPIFY_FILE
from shared.taxonomy.files import load_taxonomy

GOOGLE_URL = "https://www.google.com/basepages/producttype/taxonomy-with-ids.en-US.txt"
SHOPIFY_URL = (
    "https://raw.githubusercontent.com/Shopify/product-taxonomy/main/dist/en/categories.txt"
)
DOWNLOAD_TIMEOUT_SECONDS = 30.0


class FetchError(Exception):
    """A file could not be downloaded or is not a taxonomy file."""


def register(subparsers) -> None:
    taxonomies = subparsers.add_parser("taxonomies", help="taxonomy files").add_subparsers(
        dest="taxonomies_command", required=True
    )
    fetch = taxonomies.add_parser("fetch", help="download the official files into DIR")
    fetch.add_argument("directory", metavar="DIR", type=Path)
    fetch.add_argument("--google-url", default=GOOGLE_URL)
    fetch.add_argument("--shopify-url", default=SHOPIFY_URL)
    fetch.set_defaults(func=run)


def run(args) -> int:
    try:
        for name, version in fetch_all(
            args.directory, {GOOGLE: args.google_url, SHOPIFY: args.shopify_url}
        ).items():
            print(f"{name}: version {version}")
    except FetchError as exc:
        print(f"taxonomist: {exc}", file=sys.stderr)
        return 1
    print(f"Set TAXONOMY_DIR={args.directory} to use them.", file=sys.stderr)
    return 0


def fetch_all(directory: Path, urls: dict[str, str]) -> dict[str, str]:
    """Download each taxonomy into `directory`; answer the versions they state."""
    relative_paths = {GOOGLE: GOOGLE_FILE, SHOPIFY: SHOPIFY_FILE}
    with tempfile.TemporaryDirectory() as staging_name:
        staging = Path(staging_name)
        versions = {}
        for name, url in urls.items():
            target = staging / relative_paths[name]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_download(url))
            try:
                taxonomy = load_taxonomy(staging, name)
            except TaxonomyError as exc:
                raise FetchError(f"{url} is not a {name} taxonomy file: {exc}") from exc
            if not len(taxonomy):
                raise FetchError(f"{url} holds no {name} categories.")
            versions[name] = taxonomy.version
        for relative in relative_paths.values():
            final = directory / relative
            final.parent.mkdir(parents=True, exist_ok=True)
            # shutil.move, not rename: the staging folder may be on another filesystem.
            shutil.move(staging / relative, final)
    return versions


def _download(url: str) -> bytes:
    try:
        response = httpx.get(url, timeout=DOWNLOAD_TIMEOUT_SECONDS, follow_redirects=True)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise FetchError(
            f"could not download {url} ({exc}). Check the network, or copy the file by hand."
        ) from exc
    return response.content

"""`taxonomist taxonomies fetch`: parsing what it downloads, and a clear error offline."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from shared.taxonomy.fetch import FetchError, fetch_all
from shared.taxonomy.files import load_taxonomy
from tests.conftest import TAXONOMY_DIR
from tests.servers import free_port, run_cli


@pytest.fixture(scope="module")
def file_server():
    """The reference taxonomy folder served over HTTP on loopback."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(TAXONOMY_DIR))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_fetched_files_are_parsed_and_put_in_place(file_server, tmp_path):
    urls = {
        "Google": f"{file_server}/google/taxonomy-with-ids.en-US.txt",
        "Shopify": f"{file_server}/shopify/categories.txt",
    }
    assert fetch_all(tmp_path, urls) == {"Google": "2021-09-21", "Shopify": "2025-08-unstable"}
    assert len(load_taxonomy(tmp_path, "Google")) == 5595
    assert len(load_taxonomy(tmp_path, "Shopify")) == 10595


def test_a_file_that_is_not_a_taxonomy_replaces_nothing(file_server, tmp_path):
    urls = {
        "Google": f"{file_server}/google/taxonomy-with-ids.en-US.txt",
        "Shopify": f"{file_server}/SOURCES.md",
    }
    with pytest.raises(FetchError, match="not a Shopify taxonomy file|no Shopify categories"):
        fetch_all(tmp_path, urls)
    assert not (tmp_path / "google").exists()


def test_offline_is_a_clear_error(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}/taxonomy.txt"
    result = run_cli(
        ["taxonomies", "fetch", str(tmp_path), "--google-url", closed, "--shopify-url", closed], {}
    )
    assert result.returncode == 1
    assert "could not download" in result.stderr and closed in result.stderr
    assert "Traceback" not in result.stderr

"""A front whose database lost its schema: /readyz says not ready, and its 500s
close the connection cleanly so the client's next request gets an answer."""

from __future__ import annotations

import socket
import time
import uuid

import httpx
import pytest
from sqlalchemy import create_engine, make_url, text

from api.errors import INTERNAL_ERROR
from tests.conftest import delete_redis_keys, fresh_postgres_database, production_env
from tests.servers import Service, StallingProxy

ENDPOINT = "/api/v1/products/categorize"
PRODUCT = b'{"product": "Stainless steel chef knife"}'
# Well formed, so that authentication asks the database.
WELL_FORMED_KEY = "txn_" + "a" * 43
POSTGRES_PORT = 5432


@pytest.fixture
def front(tmp_path):
    """A front of its own over a database of its own, which the test may break,
    reached through a proxy that the test may stall."""
    namespace = f"taxonomist-test-{uuid.uuid4().hex[:8]}"
    with fresh_postgres_database() as database_url:
        url = make_url(database_url)
        proxy = StallingProxy(url.port or POSTGRES_PORT, url.host)
        proxied_url = url.set(port=proxy.port).render_as_string(hide_password=False)
        service = Service(production_env(proxied_url, namespace), tmp_path / "front.log")
        service.database_url = database_url
        service.database_proxy = proxy
        try:
            yield service
        finally:
            service.stop()
            proxy.close()
            delete_redis_keys(namespace)


def run_sql(database_url: str, statement: str) -> None:
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text(statement))
    engine.dispose()


def readiness(front: Service) -> httpx.Response:
    return httpx.get(front.url + "/readyz", timeout=10)


def test_ready_when_the_schema_is_at_the_newest_migration(front):
    response = readiness(front)
    assert response.status_code == 200
    assert response.json()["checks"] == {
        "database": True, "schema": True, "broker": True, "taxonomies": True
    }


def test_not_ready_on_a_database_without_the_schema(front):
    run_sql(front.database_url, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    response = readiness(front)
    assert response.status_code == 503
    assert response.json()["checks"]["database"] is True
    assert response.json()["checks"]["schema"] is False


def test_not_ready_on_a_schema_at_an_older_migration(front):
    run_sql(front.database_url, "UPDATE alembic_version SET version_num = '0001'")
    response = readiness(front)
    assert response.status_code == 503 and response.json()["checks"]["schema"] is False


def test_not_ready_within_seconds_when_the_database_stalls(front):
    front.database_proxy.stall()
    started = time.monotonic()
    response = readiness(front)
    elapsed = time.monotonic() - started
    front.database_proxy.resume()
    assert response.status_code == 503 and response.json()["checks"]["database"] is False
    assert elapsed < 5
    assert readiness(front).status_code == 200


def raw_request(port: int) -> bytes:
    return (
        f"POST {ENDPOINT} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {WELL_FORMED_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(PRODUCT)}\r\n\r\n"
    ).encode() + PRODUCT


def read_response(sock: socket.socket) -> bytes:
    """One response (this test's bodies are short and sized), or b"" on a closed connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_500_from_an_unhandled_error_says_connection_close(front):
    # Authentication reads a table that is gone: an error nobody handles.
    run_sql(front.database_url, "DROP TABLE api_keys CASCADE")
    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
        sock.sendall(raw_request(front.port))
        first = read_response(sock)
        assert first.startswith(b"HTTP/1.1 500 ")
        assert b"\r\nconnection: close\r\n" in first.lower()
        assert first.endswith(INTERNAL_ERROR.encode())
        # The next request on the same connection: an answer or a clean close, never silence.
        try:
            sock.sendall(raw_request(front.port))
            second = read_response(sock)
        except (BrokenPipeError, ConnectionResetError):
            second = b""
        assert second == b"" or second.startswith(b"HTTP/1.1 ")
    # A client that reuses connections sees each 500, none of them a dropped connection.
    headers = {"Authorization": f"Bearer {WELL_FORMED_KEY}"}
    with httpx.Client(base_url=front.url, timeout=10) as client:
        statuses = [client.post(ENDPOINT, content=PRODUCT, headers=headers).status_code for _ in range(3)]
    assert statuses == [500, 500, 500]

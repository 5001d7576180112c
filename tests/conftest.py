"""Session fixtures: the reference taxonomies, databases, and the service run for real.

Servers are real processes on loopback. Every test gets its own account, so
tests that share a server never see each other's keys, credits or limits.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import pytest
import redis
from sqlalchemy import create_engine, text

from shared.accounts import service as accounts
from shared.credits import service as credits
from shared.db.migrate import open_database
from shared.db.models import metadata
from shared.classification.models import TAXONOMY_NAMES
from shared.db.session import Database
from shared.taxonomy.service import load_index
from tests.servers import Process, Service

REPO_ROOT = Path(__file__).resolve().parents[1]
TAXONOMY_DIR = Path(os.environ.get("TAXONOMY_DIR") or REPO_ROOT.parent / "shared" / "taxonomies")
# Built indexes are kept between runs (the folder is ignored by git).
INDEX_CACHE_DIR = REPO_ROOT / ".cache" / "index"
POSTGRES_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
UNLIMITED_FROM_ONE_ADDRESS = "100000/100000/100000"


def base_env(**overrides: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "AI_PROVIDER"}
    }
    env.update(
        TAXONOMY_DIR=str(TAXONOMY_DIR),
        TAXONOMIST_CACHE_DIR=str(INDEX_CACHE_DIR),
        PYTHONPATH=str(REPO_ROOT),
        # Every test signs up from 127.0.0.1; tests/dashboard/test_security.py
        # runs its own server with the per-address limits tight.
        SIGNUP_LIMITS_PER_ADDRESS=UNLIMITED_FROM_ONE_ADDRESS,
        SIGNIN_LIMITS_PER_ADDRESS=UNLIMITED_FROM_ONE_ADDRESS,
    )
    env.update(overrides)
    return env


def production_env(database_url: str, namespace: str, **overrides: str) -> dict[str, str]:
    """The environment of a front and workers on this database and the test Redis."""
    return base_env(
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=REDIS_URL,
        REDIS_URL=REDIS_URL,
        REDIS_NAMESPACE=namespace,
        **overrides,
    )


def delete_redis_keys(namespace: str) -> None:
    """Every key under `<namespace>:`."""
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{namespace}:*"):
        client.delete(key)


@pytest.fixture(scope="session")
def built_indexes():
    """Build the real taxonomies' indexes once, before any server needs them.

    Servers and workers started later load them from the cache instead of
    each building its own at the same time.
    """
    for name in TAXONOMY_NAMES:
        load_index(TAXONOMY_DIR, name, INDEX_CACHE_DIR)


@pytest.fixture
def redis_prefix():
    """A key prefix no other test uses; its keys are deleted afterwards."""
    prefix = f"taxonomist-test:{uuid.uuid4().hex}"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    name = f"taxonomist_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url():
    """A fresh PostgreSQL database for this test session, dropped at the end."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> Database:
    """An empty, migrated database of each kind, one per test."""
    if request.param == "sqlite":
        database = open_database(f"sqlite:///{tmp_path / 'test.sqlite3'}")
    else:
        database = open_database(request.getfixturevalue("postgres_url"))
        with database.engine.begin() as connection:
            tables = ", ".join(table.name for table in metadata.sorted_tables)
            connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    yield database
    database.dispose()


@dataclass
class Customer:
    """An account made for one test, with one API key."""

    email: str
    key: str
    account_id: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def make_customer(
    database_url: str, *, monthly: int = 100, topup: int = 0, **limits: int
) -> Customer:
    database = open_database(database_url)
    try:
        with database.session() as session:
            account = accounts.create_account(
                session, f"{uuid.uuid4().hex[:10]}@example.test", **limits
            )
            credits.open_balance(session, account.id, monthly_allowance=monthly, topup=topup)
            issued = accounts.create_key(session, account, "test", "support@example.test")
        return Customer(email=account.email, key=issued.value, account_id=account.id)
    finally:
        database.dispose()


def balance_of(database_url: str, account_id: int) -> credits.BalanceView:
    database = Database(database_url)
    try:
        with database.session() as session:
            return credits.show(session, account_id)
    finally:
        database.dispose()


@dataclass
class Stack:
    """A running service: its URL(s) and the environment its processes share."""

    url: str
    env: dict[str, str]
    database_url: str
    fronts: list[Service]

    def customer(self, **kwargs) -> Customer:
        return make_customer(self.database_url, **kwargs)

    def balance(self, customer: Customer) -> credits.BalanceView:
        return balance_of(self.database_url, customer.account_id)

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, **kwargs)


@pytest.fixture(scope="session")
def embedded(tmp_path_factory, built_indexes) -> Stack:
    """`taxonomist serve` with no configuration but TAXONOMY_DIR and a SQLite file."""
    folder = tmp_path_factory.mktemp("embedded")
    database_url = f"sqlite:///{folder / 'taxonomist.sqlite3'}"
    env = base_env(DATABASE_URL=database_url, SUPPORT_EMAIL="help@example.test")
    service = Service(env, folder / "serve.log")
    yield Stack(service.url, env, database_url, [service])
    service.stop()


@pytest.fixture(scope="session")
def production(tmp_path_factory, postgres_url, built_indexes) -> Stack:
    """Two fronts and a worker sharing PostgreSQL and Redis, as in production."""
    folder = tmp_path_factory.mktemp("production")
    namespace = f"taxonomist-test-{uuid.uuid4().hex[:8]}"
    env = production_env(postgres_url, namespace)
    open_database(postgres_url).dispose()
    worker = Process(["worker", "--concurrency", "2"], env, folder / "worker.log")
    fronts = [Service(env, folder / f"front-{n}.log") for n in range(2)]
    yield Stack(fronts[0].url, env, postgres_url, fronts)
    for process in [*fronts, worker]:
        process.stop()
    delete_redis_keys(namespace)

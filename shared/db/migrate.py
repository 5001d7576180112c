"""Bring a database's schema up to date (run by `serve` and every admin command)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_incrementing

from shared.db.session import Database

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config(connection=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine) -> None:
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")


@cache
def head_revision() -> str:
    """The revision this code's schema is at: the newest migration."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None  # the migrations ship with the code
    return head


def schema_is_current(engine: Engine) -> bool:
    """The database's schema is at this code's revision (False: none, or another one)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head_revision()


UPGRADE_ATTEMPTS = 3
UPGRADE_BACKOFF_SECONDS = 0.2


def open_database(url: str) -> Database:
    """A Database whose schema is current: a fresh DATABASE_URL just works."""
    database = Database(url)
    # Two processes upgrading a fresh database at once: one wins, the other
    # fails on a table that now exists and finds it current next time.
    for attempt in Retrying(
        stop=stop_after_attempt(UPGRADE_ATTEMPTS),
        wait=wait_incrementing(start=UPGRADE_BACKOFF_SECONDS, increment=UPGRADE_BACKOFF_SECONDS),
        retry=retry_if_exception_type(DBAPIError),
        reraise=True,
    ):
        with attempt:
            upgrade(database.engine)
    return database

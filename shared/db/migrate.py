"""Bring a database's schema up to date (run by `serve` and every admin command)."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

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
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def schema_is_current(engine: Engine) -> bool:
    """The database's schema is at this code's revision (False: none, or another one)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head_revision()


UPGRADE_ATTEMPTS = 3


def open_database(url: str) -> Database:
    """A Database whose schema is current: a fresh DATABASE_URL just works."""
    database = Database(url)
    for attempt in range(1, UPGRADE_ATTEMPTS + 1):
        try:
            upgrade(database.engine)
            return database
        except DBAPIError:
            # Two processes upgrading a fresh database at once: one wins, the
            # other fails on a table that now exists and finds it current next time.
            if attempt == UPGRADE_ATTEMPTS:
                raise
            time.sleep(0.2 * attempt)
    return database

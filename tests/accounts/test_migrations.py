"""Migration 0003 (session generations) on a database that has accounts already."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from shared.db.migrate import alembic_config
from shared.db.models import metadata
from tests.conftest import fresh_postgres_database


def check_upgrade_keeps_accounts(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0002")
            connection.execute(
                text("INSERT INTO accounts (email, created_at) VALUES ('old@example.test', CURRENT_TIMESTAMP)")
            )
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with engine.connect() as connection:
            generation = connection.execute(
                text("SELECT session_generation FROM accounts WHERE email = 'old@example.test'")
            ).scalar_one()
            differences = compare_metadata(MigrationContext.configure(connection), metadata)
        assert generation == 0
        assert differences == []
    finally:
        engine.dispose()


def test_sqlite_upgrade_keeps_accounts_and_matches_the_models(tmp_path):
    check_upgrade_keeps_accounts(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_postgresql_upgrade_keeps_accounts_and_matches_the_models():
    with fresh_postgres_database() as url:
        check_upgrade_keeps_accounts(url)

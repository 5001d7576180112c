"""Starting the service: configuration errors are clear, stale credits come back."""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import update

from shared.credits import service as credits
from shared.credits.models import CreditHold
from shared.db.base import utcnow
from shared.db.session import Database
from tests.conftest import balance_of, base_env, make_customer
from tests.servers import Service, run_cli


def test_missing_taxonomy_dir_is_a_clear_error_naming_the_variable(tmp_path):
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    del env["TAXONOMY_DIR"]
    result = run_cli(["serve", "--port", "1"], env, timeout=60)
    assert result.returncode == 2
    assert "TAXONOMY_DIR" in result.stderr and "Traceback" not in result.stderr


def test_unreadable_taxonomy_dir_is_a_clear_error(tmp_path):
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", TAXONOMY_DIR=str(tmp_path / "nowhere"))
    result = run_cli(["serve", "--port", "1"], env, timeout=60)
    assert result.returncode == 2
    assert "TAXONOMY_DIR" in result.stderr and "nowhere" in result.stderr


def test_reservations_left_by_a_crash_are_refunded_when_a_front_starts(tmp_path, built_indexes):
    database_url = f"sqlite:///{tmp_path / 'crash.sqlite3'}"
    customer = make_customer(database_url, monthly=2)
    database = Database(database_url)
    with database.session() as session:
        orphan = credits.hold(session, customer.account_id, expires_in=timedelta(minutes=15))
        session.execute(
            update(CreditHold)
            .where(CreditHold.id == orphan.id)
            .values(expires_at=utcnow() - timedelta(minutes=45))
        )
    database.dispose()
    assert balance_of(database_url, customer.account_id).total == 1
    service = Service(base_env(DATABASE_URL=database_url), tmp_path / "serve.log")
    try:
        deadline = time.monotonic() + 30
        while balance_of(database_url, customer.account_id).total != 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert balance_of(database_url, customer.account_id).total == 2
    finally:
        service.stop()

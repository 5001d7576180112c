"""Starting the service: configuration errors are clear, stale credits come back."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx

from sqlalchemy import update

from shared.credits import service as credits
from shared.credits.models import CreditHold
from shared.db.base import utcnow
from shared.db.session import Database
from tests.conftest import balance_of, base_env, make_customer
from tests.servers import Service, run_cli, session_pids


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
        orphan = credits.hold(session, customer.account_id, expires_at=utcnow() + timedelta(minutes=15))
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


def test_several_front_processes_serve_one_port(production, tmp_path):
    service = Service(production.env, tmp_path / "serve.log", extra_args=["--workers", "2"])
    try:
        customer = production.customer(monthly=4)
        with httpx.Client(base_url=service.url, timeout=60) as client:
            statuses = [
                client.post(
                    "/api/v1/products/categorize", json={"product": "Chef knife"}, headers=customer.headers
                ).status_code
                for _ in range(4)
            ]
        processes = session_pids(service.popen.pid)
    finally:
        service.stop()
    assert statuses == [200] * 4
    assert production.balance(customer).total == 0
    # The supervisor and its two front processes (beside multiprocessing's helper).
    assert len(processes) >= 3
    assert service.log().count("Application startup complete") == 2


def test_several_front_processes_need_the_production_mode(tmp_path):
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    result = run_cli(["serve", "--port", "1", "--workers", "2"], env, timeout=60)
    assert result.returncode == 2
    assert "--workers" in result.stderr and "CELERY_BROKER_URL" in result.stderr
    assert "Traceback" not in result.stderr

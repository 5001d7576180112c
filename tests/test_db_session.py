"""A pooled PostgreSQL connection that the server has closed is replaced at
checkout, without a round trip (shared.db.session)."""

from __future__ import annotations

import gc
import threading
import time

from sqlalchemy import create_engine, text

from shared.db.session import Database, PoolLimits
from tests.conftest import POSTGRES_ADMIN_URL


def _backend_pid(database: Database) -> int:
    with database.engine.connect() as connection:
        return connection.execute(text("SELECT pg_backend_pid()")).scalar_one()


def test_a_connection_the_server_terminated_is_replaced_at_checkout(postgres_url):
    database = Database(postgres_url, PoolLimits(size=1, max_overflow=0))
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        first = _backend_pid(database)
        with admin.connect() as connection:
            assert connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first}).scalar()
            for _ in range(100):
                gone = not connection.execute(
                    text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": first}
                ).scalar()
                if gone:
                    break
                time.sleep(0.05)
        # The pool's only connection is the terminated one: the checkout
        # replaces it, and the statement runs on the new one.
        assert _backend_pid(database) != first
    finally:
        database.dispose()
        admin.dispose()


def test_a_thread_that_ends_gives_its_kept_connection_back_to_the_pool(postgres_url):
    database = Database(postgres_url, PoolLimits(size=2, max_overflow=0))
    used = threading.Event()
    finish = threading.Event()

    def settle_once() -> None:
        database.autocommit(lambda connection: connection.execute(text("SELECT 1")).scalar_one())
        used.set()
        finish.wait(10)

    try:
        thread = threading.Thread(target=settle_once)
        thread.start()
        assert used.wait(10)
        # Kept while its thread lives: the next settlement needs no checkout.
        assert database.engine.pool.checkedout() == 1
        finish.set()
        thread.join(10)
        gc.collect()
        assert database.engine.pool.checkedout() == 0
    finally:
        finish.set()
        database.dispose()

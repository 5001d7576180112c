"""Engines and sessions for SQLite (embedded default) and PostgreSQL alike."""

from __future__ import annotations

import select
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from shared.settings import Settings

SQLITE_BUSY_TIMEOUT_SECONDS = 30
T = TypeVar("T")


@dataclass(frozen=True)
class PoolLimits:
    """PostgreSQL connections a process keeps, opens beyond them at most, and how
    long a call waits for one when all are in use."""

    size: int = Settings.database_pool_size
    max_overflow: int = Settings.database_max_overflow
    timeout_seconds: float = Settings.database_pool_timeout_seconds

    @classmethod
    def of(cls, settings: "Settings") -> "PoolLimits":
        return cls(
            settings.database_pool_size,
            settings.database_max_overflow,
            settings.database_pool_timeout_seconds,
        )


def _normalise_url(url: str) -> str:
    # Users paste the URLs their hosting gives; psycopg 3 is the driver we ship.
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def make_engine(url: str, pool: PoolLimits = PoolLimits()) -> Engine:
    url = _normalise_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        event.listen(engine, "connect", _configure_sqlite)
        return engine
    engine = create_engine(
        url,
        pool_size=pool.size,
        max_overflow=pool.max_overflow,
        pool_timeout=pool.timeout_seconds,
    )
    event.listen(engine, "checkout", _refuse_a_closed_connection)
    return engine


def _refuse_a_closed_connection(dbapi_connection, _record, _proxy) -> None:
    """A pooled connection the server has closed or is closing is replaced at checkout.

    An idle PostgreSQL connection has nothing to read: data waiting on its
    socket is the server's goodbye (a restart, a terminated backend: an error
    message, then end of file). One poll of the socket, no round trip, where
    `pool_pre_ping` sent a `SELECT 1` with every checkout (a round trip of
    every request of the front). On DisconnectionError the pool discards the
    connection and checks out another. A connection lost without a word
    (a network gone) fails on its first statement instead, which invalidates
    the pool: that request gets its error, the next ones new connections.
    """
    if dbapi_connection.closed:
        raise DisconnectionError("the connection is closed")
    poller = select.poll()
    poller.register(dbapi_connection.fileno(), select.POLLIN)
    if poller.poll(0):
        raise DisconnectionError("the server has closed or is closing the connection")


def _configure_sqlite(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the admin commands read and write while `serve` runs on the same file.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class _KeptConnection:
    """A thread's own autocommit connection (Database.autocommit)."""

    __slots__ = ("connection", "__weakref__")

    def __init__(self, connection: Connection) -> None:
        self.connection = connection


class Database:
    """One engine and its session factory, shared by a process."""

    def __init__(self, url: str, pool: PoolLimits = PoolLimits()) -> None:
        self.url = _normalise_url(url)
        self.engine = make_engine(url, pool)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Statements that commit on their own: no BEGIN and COMMIT round
        # trips (the same pool; psycopg's autocommit is a client-side switch).
        self._autocommit = (
            self.engine.execution_options(isolation_level="AUTOCOMMIT")
            if self.engine.dialect.name == "postgresql"
            else None
        )
        self._kept = threading.local()
        self._all_kept: set[Connection] = set()
        self._lock = threading.Lock()

    @classmethod
    def of(cls, settings: "Settings") -> "Database":
        return cls(settings.database_url, PoolLimits.of(settings))

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def autocommit(self, work: Callable[[Connection], T]) -> T:
        """`work` on this thread's own PostgreSQL connection in autocommit, for
        work that is one statement (a worker's settlement): kept between
        calls, so no pool checkout, BEGIN or COMMIT: one round trip.

        A connection found broken (the database restarted) is replaced and
        `work` runs once more: its statement either never ran or committed
        before the break, and must be one that a second run cannot repeat
        (a compare-and-set). Any other error gives the connection back.
        """
        if self._autocommit is None:
            raise ValueError("autocommit connections are for PostgreSQL")
        holder = getattr(self._kept, "holder", None)
        if holder is not None:
            try:
                return work(holder.connection)
            except Exception as error:
                self._give_back(holder.connection)
                if not (isinstance(error, DBAPIError) and error.connection_invalidated):
                    raise
        connection = self._autocommit.connect()
        holder = _KeptConnection(connection)
        with self._lock:
            self._all_kept.add(connection)
        # A thread that ends drops its holder, and the connection goes back
        # to the pool: short-lived threads must not keep the pool's connections.
        weakref.finalize(holder, _release, self._lock, self._all_kept, connection)
        self._kept.holder = holder
        try:
            return work(connection)
        except Exception:
            self._give_back(connection)
            raise

    def _give_back(self, connection: Connection) -> None:
        self._kept.holder = None
        _release(self._lock, self._all_kept, connection)

    def dispose(self) -> None:
        with self._lock:
            kept = list(self._all_kept)
            self._all_kept.clear()
        for connection in kept:
            connection.close()
        self.engine.dispose()


def _release(lock: threading.Lock, kept: set[Connection], connection: Connection) -> None:
    """Close a kept connection (back to the pool) once, whoever asks first:
    its thread after an error, the end of its thread, or `dispose`."""
    with lock:
        if connection not in kept:
            return
        kept.discard(connection)
    connection.close()

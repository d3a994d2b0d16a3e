"""Where a VoyageWorld's transactions run: one SQLite file, or a pool of PostgreSQL connections."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Generator, Hashable
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Protocol

from starharness.runtime.session.postgres import PostgresTarget

from . import pg_conn, sqlite_conn
from .driver import Driver
from .errors import TransactionStateError, WorldError


class Backend(Protocol):
    """Opens transactions on one world; thread-safe."""

    @property
    def where(self) -> str:
        """The file path or host:port/db, for messages."""
        ...

    @property
    def attempts(self) -> int:
        """How often an action may run before the world counts as busy (1: no conflicts)."""
        ...

    @property
    def optimistic_attempts(self) -> int:
        """Tries that run alongside other writers; later ones run alone."""
        ...

    @property
    def blocks_on_network(self) -> bool: ...

    def write(self, *, alone: bool = False) -> AbstractContextManager[Driver]:
        """A write transaction; `alone`: with no other writer of the world running at once."""
        ...

    def read(self) -> AbstractContextManager[Driver]: ...

    def single_read(self) -> AbstractContextManager[Driver]:
        """For one statement: consistent by itself, so no transaction where that is cheaper."""
        ...

    def state_token(self, tables: frozenset[str]) -> Hashable | None:
        """Inside `read()`: a value that changes whenever anyone commits to the world in a way
        that may change one of `tables`; None when that cannot be told cheaply (then nothing
        read may be cached)."""
        ...

    def close(self) -> None: ...


class SqliteBackend:
    """One connection and a lock: SQLite allows one writer at a time anyway."""

    attempts = 1
    optimistic_attempts = 1
    blocks_on_network = False

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self._driver = sqlite_conn.SqliteDriver(conn)
        self._lock = threading.RLock()
        self._closed = False
        # Our own write transactions, which `PRAGMA data_version` ignores, counted per table
        # they wrote (ANY_TABLE: a statement that might write any), so a cache of what some
        # tables say outlives commits to others (a closing encounter's memory row).
        self._writes: dict[str, int] = {}

    @property
    def where(self) -> str:
        return str(self.path)

    @contextmanager
    def write(self, *, alone: bool = False) -> Generator[Driver, None, None]:
        del alone  # BEGIN IMMEDIATE: every SQLite writer runs alone anyway
        with self._lock:
            self._require_open()
            driver = self._driver
            driver.written = written = set[str]()
            try:
                with sqlite_conn.write_transaction(driver.conn):
                    yield driver
            finally:
                driver.written = None
                # Rolled back or not: a count too many only costs a cache a read.
                for table in written:
                    self._writes[table] = self._writes.get(table, 0) + 1

    @contextmanager
    def single_read(self) -> Generator[Driver, None, None]:
        # In autocommit mode one SELECT is its own read transaction: BEGIN and ROLLBACK around
        # it would only cost two more statements.
        with self._lock:
            self._require_open()
            if self._driver.conn.in_transaction:
                raise TransactionStateError("a transaction is already open on this World")
            yield self._driver

    def state_token(self, tables: frozenset[str]) -> Hashable | None:
        # data_version changes when another connection (or process) commits to the file, to
        # any table: there no finer token can be had. The counts only grow, so their sum moves
        # whenever one of them does.
        version = self._driver.conn.execute("PRAGMA data_version").fetchone()[0]
        writes = self._writes
        ours = writes.get(sqlite_conn.ANY_TABLE, 0) + sum(writes.get(t, 0) for t in tables)
        return (ours, int(version))

    @contextmanager
    def read(self) -> Generator[Driver, None, None]:
        with self._lock:
            self._require_open()
            with sqlite_conn.read_snapshot(self._driver.conn):
                yield self._driver

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._driver.conn.close()

    def _require_open(self) -> None:
        if self._closed:
            raise WorldError(f"the world at {self.path} is closed")


class PostgresBackend:
    """A small pool of connections: a network round trip per statement must not serialise
    every player's reads behind one lock."""

    attempts = 8
    optimistic_attempts = 3
    """Tries before an action waits to run alone among the world's writers."""
    blocks_on_network = True

    def __init__(self, pool: pg_conn.ConnectionPool) -> None:
        self._pool = pool
        self.target: PostgresTarget = pool.target
        # Once: describing parses the URL, and every read and write names its world.
        self.where = self.target.describe()

    def write(self, *, alone: bool = False) -> AbstractContextManager[Driver]:
        return self._begun(lambda conn: pg_conn.write_transaction(conn, self.where, alone=alone))

    def read(self) -> AbstractContextManager[Driver]:
        return self._begun(lambda conn: pg_conn.read_snapshot(conn, self.where))

    def single_read(self) -> AbstractContextManager[Driver]:
        return self.read()

    def state_token(self, tables: frozenset[str]) -> Hashable | None:
        del tables
        return None  # other processes write the database with no cheap way to tell

    @contextmanager
    def _begun(
        self, begin: Callable[[pg_conn.Conn], AbstractContextManager[Driver]]
    ) -> Generator[Driver, None, None]:
        # An idle connection the server dropped (a restart) fails at BEGIN, before anything was
        # sent: drop it and begin once more on a fresh one.
        for attempt in (1, 2):
            with ExitStack() as stack:
                conn = stack.enter_context(self._pool.connection())
                try:
                    driver = stack.enter_context(begin(conn))
                except pg_conn.StaleConnectionError:
                    if attempt == 2:
                        raise
                    continue
                yield driver
                return

    def close(self) -> None:
        self._pool.close()

"""The world in a PostgreSQL database: connections, transactions, and error mapping.

Tables live in the schema `voyage` (see `pg_schema`); every connection's search_path points
there, so the store's statements are the same text on both databases.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus

from starharness.runtime.session import StoreUnreachableError
from starharness.runtime.session.postgres import PostgresTarget

from .driver import Dialect, Params, Row
from .errors import TransactionStateError, WorldConflictError, WorldError

NAMESPACE = "voyage"
DEFAULT_POOL_SIZE = 8
"""Connections a World holds at most: one per worker thread that may call it at once."""

Conn = psycopg.Connection[tuple[Any, ...]]
_CONFLICTS = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)

# Every write transaction holds this advisory lock shared; an action that kept conflicting takes
# it exclusively, before its snapshot, so it runs alone among the world's writers and cannot
# lose again (the key is arbitrary but fixed: "StHa" and a number of its own).
_WRITERS_LOCK = (int.from_bytes(b"StHa", "big"), 3)
_BEGIN_SHARED = (
    "BEGIN ISOLATION LEVEL SERIALIZABLE; "
    f"SELECT pg_advisory_xact_lock_shared({_WRITERS_LOCK[0]}, {_WRITERS_LOCK[1]})"
).encode()


@lru_cache(maxsize=1024)
def to_pyformat(sql: str) -> bytes:
    """`?` placeholders as psycopg's `%s` (a literal `%` doubled), encoded once per text."""
    return sql.replace("%", "%%").replace("?", "%s").encode()


class PgDriver:
    """The Driver over one psycopg connection inside one transaction.

    A failed statement poisons the transaction: later statements and the commit refuse, so game
    code that swallows an exception cannot commit half an action.
    """

    def __init__(self, conn: Conn, where: str) -> None:
        self.conn = conn
        self.where = where
        self.failure: BaseException | None = None

    @property
    def dialect(self) -> Dialect:
        return "postgresql"

    def rows(self, sql: str, params: Params = ()) -> list[Row]:
        self._require_healthy()
        try:
            cursor = self.conn.execute(to_pyformat(sql), tuple(params))
            return cursor.fetchall() if cursor.description else []
        except psycopg.Error as error:
            raise self._failed(error) from error

    def many(self, sql: str, seq: Iterable[Params]) -> None:
        self._require_healthy()
        try:
            with self.conn.cursor() as cursor:
                cursor.executemany(to_pyformat(sql), [tuple(params) for params in seq])
        except psycopg.Error as error:
            raise self._failed(error) from error

    def _require_healthy(self) -> None:
        if self.failure is not None:
            raise TransactionStateError(
                f"an earlier statement of this transaction failed ({self.failure}); it rolls back"
            )

    def _failed(self, error: psycopg.Error) -> BaseException:
        mapped = map_error(error, self.where)
        self.failure = mapped
        return mapped


class WorldUnreachableError(WorldError, StoreUnreachableError):
    """The world's database server cannot be reached (down, restarting, or the link broke).

    A StoreUnreachableError too: a server above the game tells players the world is out of
    reach for now (and keeps the cause, which names the host, for its log), without knowing
    the game's store.
    """


class StaleConnectionError(WorldUnreachableError):
    """A pooled connection turned out dead before its transaction began (nothing was sent)."""


def map_error(error: psycopg.Error, where: str) -> BaseException:
    """A conflict as WorldConflictError (the action re-runs), a lost server as WorldError;
    anything else (a CHECK constraint, say) as raised."""
    if isinstance(error, _CONFLICTS):
        return WorldConflictError(f"the transaction conflicted with another writer ({error})")
    if isinstance(error, psycopg.OperationalError):
        return WorldUnreachableError(f"lost the world database at {where}: {error}")
    return error


def connect(target: PostgresTarget) -> Conn:
    """A connection in autocommit mode (we issue BEGIN ourselves), search_path on `voyage`."""
    try:
        conn = target.connect(autocommit=True)
    except Exception as error:  # StoreUnreachableError: its message names host:port/db only
        raise WorldUnreachableError(str(error)) from None
    try:
        conn.execute(f"SET search_path TO {NAMESPACE}".encode())
    except psycopg.OperationalError as error:
        conn.close()
        raise WorldUnreachableError(
            f"lost the world database at {target.describe()}: {error}"
        ) from error
    return conn


class ConnectionPool:
    """At most `size` connections, opened on demand and kept for reuse; thread-safe."""

    def __init__(self, target: PostgresTarget, size: int = DEFAULT_POOL_SIZE) -> None:
        if size < 1:
            raise ValueError(f"a pool needs at least one connection, got {size}")
        self.target = target
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[Conn] = []
        self._closed = False

    def give(self, conn: Conn) -> None:
        """Add an open connection (the one that created the schema) to the idle ones."""
        with self._lock:
            self._idle.append(conn)

    @contextmanager
    def connection(self) -> Generator[Conn, None, None]:
        self._slots.acquire()
        try:
            conn = self._take()
            try:
                yield conn
            finally:
                self._put_back(conn)
        finally:
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> Conn:
        with self._lock:
            if self._closed:
                raise WorldError(f"the world at {self.target.describe()} is closed")
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed:
                    return conn
        return connect(self.target)

    def _put_back(self, conn: Conn) -> None:
        healthy = not conn.closed and conn.info.transaction_status == TransactionStatus.IDLE
        stale: list[Conn] = []
        with self._lock:
            if healthy and not self._closed:
                self._idle.append(conn)
                return
            if conn.closed:
                # Only a failure closes a lent connection (see `_rollback`): the server went
                # away (a restart), every idle connection is as dead as this one, and each
                # would cost a later caller a failed BEGIN to find out.
                stale, self._idle = self._idle, []
        conn.close()
        for idle in stale:
            idle.close()


@contextmanager
def write_transaction(
    conn: Conn, where: str, *, alone: bool = False
) -> Generator[PgDriver, None, None]:
    """`BEGIN ISOLATION LEVEL SERIALIZABLE` ... `COMMIT`; any exception rolls every write back.

    A conflict (now or at commit) raises WorldConflictError; `VoyageWorld.run_action` re-runs.
    `alone` first waits until no other writer of the world is in a transaction and keeps new
    ones out until this one ends: the way out for an action that lost every optimistic try.
    """
    if alone:
        _lock_alone(conn, where)
    try:
        with _serializable(conn, where) as driver:
            yield driver
    finally:
        if alone and not conn.closed:
            try:
                conn.execute(b"SELECT pg_advisory_unlock(%s, %s)", _WRITERS_LOCK)
            except psycopg.Error:
                conn.close()  # the session (and its lock) ends with the connection


def _lock_alone(conn: Conn, where: str) -> None:
    # A session lock taken outside the transaction: the snapshot that follows is taken after
    # every earlier writer has finished.
    try:
        conn.execute(b"SELECT pg_advisory_lock(%s, %s)", _WRITERS_LOCK)
    except psycopg.Error as error:
        raise _stale_or(error, where) from error


@contextmanager
def _serializable(conn: Conn, where: str) -> Generator[PgDriver, None, None]:
    driver = PgDriver(conn, where)
    _begin(conn, where, _BEGIN_SHARED)
    try:
        yield driver
    except BaseException:
        _rollback(conn)
        raise
    if driver.failure is not None:
        _rollback(conn)
        raise driver.failure
    try:
        conn.execute(b"COMMIT")
    except psycopg.Error as error:
        _rollback(conn)
        raise map_error(error, where) from error


@contextmanager
def read_snapshot(conn: Conn, where: str) -> Generator[PgDriver, None, None]:
    """`REPEATABLE READ READ ONLY`: one consistent moment that never blocks or aborts writers."""
    _begin(conn, where, b"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield PgDriver(conn, where)
    finally:
        _rollback(conn)


def _begin(conn: Conn, where: str, statement: bytes) -> None:
    if conn.info.transaction_status != TransactionStatus.IDLE:
        raise TransactionStateError("a transaction is already open on this connection")
    try:
        conn.execute(statement)
    except psycopg.Error as error:
        _rollback(conn)
        raise _stale_or(error, where) from error


def _stale_or(error: psycopg.Error, where: str) -> BaseException:
    if isinstance(error, psycopg.OperationalError):
        return StaleConnectionError(f"lost the world database at {where}: {error}")
    return map_error(error, where)


def _rollback(conn: Conn) -> None:
    if conn.closed:
        return
    try:
        conn.execute(b"ROLLBACK")
    except psycopg.Error:
        # The connection is gone; the server rolled back with it, and the pool drops it.
        conn.close()

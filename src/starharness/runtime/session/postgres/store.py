"""PostgresStore: session logs in a PostgreSQL database, written in batches by a background
thread; several processes may share one store."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg

from ..errors import StoreClosedError, StoreError, StoreWriteError
from ..queued import Append, Create, Delete, Op, QueuedWrites, describe
from ..sqlite.codec import EventRow, StoredRow, decode_log, decode_meta, encode_event, encode_meta
from ..sqlite.writer import BatchWriter
from ..store import SessionInfo, StoredSession
from .schema import NAMESPACE, check_or_create
from .target import PostgresTarget

_log = logging.getLogger("starharness.runtime.session")

T = TypeVar("T")
_Conn = psycopg.Connection[tuple[Any, ...]]

_INSERT_EVENT = f"INSERT INTO {NAMESPACE}.events VALUES (%s, %s, %s, %s, %s, %s, %s)".encode()
_INSERT_SESSION = (
    f"INSERT INTO {NAMESPACE}.sessions (id, created_at, updated_at, meta) VALUES (%s, %s, %s, %s)"
).encode()
_DELETE_SESSION = f"DELETE FROM {NAMESPACE}.sessions WHERE id = %s".encode()
_TOUCH = f"UPDATE {NAMESPACE}.sessions SET updated_at = greatest(updated_at, %s) WHERE id = %s"
_NEXT_BATCH = f"SELECT nextval('{NAMESPACE}.batches')".encode()


class _Link:
    """One connection and the lock that serialises its users; reconnects after a failure."""

    def __init__(self, target: PostgresTarget) -> None:
        self._target = target
        self.lock = threading.Lock()
        self._conn: _Conn | None = target.connect(autocommit=True)

    def get(self) -> _Conn:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self._conn = None
            conn = self._conn = self._target.connect(autocommit=True)
        return conn

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresStore(QueuedWrites):
    """Session logs in a PostgreSQL database (schema `star_harness_sessions`).

    Same contract as SqliteStore: opening checks the store's identity and schema version;
    appends are queued and written many per transaction at most `max_write_delay_s` later, so a
    crash loses at most the unflushed tail. Writes use one connection, reads another.
    """

    def __init__(
        self,
        target: PostgresTarget,
        *,
        max_write_delay_s: float = 0.1,
        max_batch: int = 2000,
    ) -> None:
        self.target = target
        self._writes = _Link(target)
        try:
            check_or_create(self._writes.get(), target)
            self._reads = _Link(target)
        except BaseException:
            self._writes.close()
            raise
        self._closed = False
        self.transactions = 0
        """Write transactions committed (a batch of appends is one)."""
        self.events_written = 0
        self._writer: BatchWriter[Op] = BatchWriter(
            self._write_batch,
            max_delay_s=max_write_delay_s,
            max_batch=max_batch,
            name=f"session store {target.describe()}",
        )

    @classmethod
    async def open(
        cls,
        target: PostgresTarget,
        *,
        max_write_delay_s: float = 0.1,
        max_batch: int = 2000,
    ) -> PostgresStore:
        """Connect and check the store in a worker thread, so the event loop never waits."""
        return await asyncio.to_thread(
            lambda: cls(target, max_write_delay_s=max_write_delay_s, max_batch=max_batch)
        )

    def __repr__(self) -> str:
        return f"PostgresStore({self.target.describe()!r})"

    async def aclose(self) -> None:
        """Write everything queued, stop the writer thread and close both connections."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._writer.aclose()
        finally:
            await asyncio.to_thread(self._close_connections)

    # -- reads ---------------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """One indexed lookup, inline: the service asks it only when creating a session (and
        keeps its open sessions itself)."""
        self._check_open()
        row = self._read(
            lambda conn: conn.execute(
                f"SELECT 1 FROM {NAMESPACE}.sessions WHERE id = %s".encode(), (session_id,)
            ).fetchone()
        )
        return row is not None

    async def load(self, session_id: str) -> StoredSession | None:
        self._check_open()
        await self._writer.flush()
        return await asyncio.to_thread(self._read, lambda conn: self._load(conn, session_id))

    async def list_sessions(self) -> list[SessionInfo]:
        self._check_open()
        await self._writer.flush()
        return await asyncio.to_thread(self._read, _list)

    # -- worker-thread side -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the session store {self.target.describe()} is closed")

    def _close_connections(self) -> None:
        self._writes.close()
        self._reads.close()

    def _read(self, work: Callable[[_Conn], T]) -> T:
        with self._reads.lock:
            conn = self._reads.get()
            try:
                return work(conn)
            except psycopg.OperationalError as exc:
                if not conn.broken:
                    raise StoreError(f"reading {self.target.describe()} failed: {exc}") from None
            # The connection was lost (a server restart, a failover): reads are idempotent, so
            # one more try on a new connection.
            try:
                return work(self._reads.get())
            except psycopg.OperationalError as exc:
                raise StoreError(f"reading {self.target.describe()} failed: {exc}") from None

    def _load(self, conn: _Conn, session_id: str) -> StoredSession | None:
        head = conn.execute(
            f"SELECT created_at, meta FROM {NAMESPACE}.sessions WHERE id = %s".encode(),
            (session_id,),
        ).fetchone()
        if head is None:
            return None
        rows: list[StoredRow] = conn.execute(  # pyright: ignore[reportAssignmentType]
            f"SELECT seq, time, type, data, batch, crc FROM {NAMESPACE}.events"
            " WHERE session_id = %s ORDER BY seq".encode(),
            (session_id,),
        ).fetchall()
        log = decode_log(session_id, rows)
        if log.torn_from is not None:
            _log.warning(
                "session %r: event %d %s; dropping the torn tail of %d event(s)",
                session_id,
                log.torn_from,
                log.problem,
                log.dropped,
            )
            with conn.transaction():
                conn.execute(
                    f"DELETE FROM {NAMESPACE}.events WHERE session_id = %s AND seq >= %s".encode(),
                    (session_id, log.torn_from),
                )
        return StoredSession(session_id, head[0], decode_meta(head[1]), log.events, log.dropped)

    def _write_batch(self, ops: list[Op]) -> Exception | None:
        with self._writes.lock:
            conn = self._writes.get()
            try:
                with conn.transaction():
                    written = _apply(conn, ops, _next_batch(conn))
                refused: list[str] = []
            except psycopg.IntegrityError:
                # One bad operation (say, a session id another process created) must not keep
                # every other session's events out of the store: write them one by one instead.
                with conn.transaction():
                    written, refused = _apply_each(conn, ops, _next_batch(conn))
            self.transactions += 1
            self.events_written += written
        if refused:
            _log.error(
                "session store %s refused %d write(s): %s",
                self.target.describe(),
                len(refused),
                refused,
            )
            return StoreWriteError(f"{len(refused)} write(s) refused: {'; '.join(refused[:3])}")
        return None


def _next_batch(conn: _Conn) -> int:
    row = conn.execute(_NEXT_BATCH).fetchone()
    assert row is not None
    batch: int = row[0]
    return batch


def _apply_each(conn: _Conn, ops: list[Op], batch: int) -> tuple[int, list[str]]:
    written = 0
    refused: list[str] = []
    for op in ops:
        try:
            with conn.transaction():  # a savepoint inside the batch's transaction
                written += _apply(conn, [op], batch)
        except psycopg.IntegrityError as exc:
            refused.append(f"{describe(op)}: {str(exc).strip()}")
    return written, refused


def _apply(conn: _Conn, ops: list[Op], batch: int) -> int:
    rows: list[EventRow] = []
    active: dict[str, int] = {}
    written = 0
    with conn.cursor() as cursor:

        def insert_rows() -> None:
            if rows:
                cursor.executemany(_INSERT_EVENT, rows)
                rows.clear()

        for op in ops:
            if isinstance(op, Append):
                rows.append(encode_event(op.session_id, op.event, batch))
                active[op.session_id] = op.event.time
                written += 1
                continue
            # Other operations keep their place in the queue's order relative to appends.
            insert_rows()
            if isinstance(op, Create):
                cursor.execute(
                    _INSERT_SESSION,
                    (op.session_id, op.created_at, op.created_at, encode_meta(op.meta)),
                )
            elif isinstance(op, Delete):
                cursor.execute(_DELETE_SESSION, (op.session_id,))
                active.pop(op.session_id, None)
            else:
                _touch(cursor, active)
                active.clear()
                _prune(cursor, op.keep, op.protect)
        insert_rows()
        _touch(cursor, active)
    return written


def _touch(cursor: psycopg.Cursor[tuple[Any, ...]], active: dict[str, int]) -> None:
    if active:
        cursor.executemany(_TOUCH.encode(), [(at, session_id) for session_id, at in active.items()])


def _prune(cursor: psycopg.Cursor[tuple[Any, ...]], keep: int, protect: frozenset[str]) -> None:
    doomed = cursor.execute(
        f"SELECT id FROM {NAMESPACE}.sessions"
        " ORDER BY updated_at DESC, ord DESC OFFSET %s".encode(),
        (keep,),
    ).fetchall()
    victims = [(row[0],) for row in doomed if row[0] not in protect]
    if victims:
        cursor.executemany(_DELETE_SESSION, victims)


def _list(conn: _Conn) -> list[SessionInfo]:
    rows = conn.execute(
        f"SELECT id, created_at, updated_at, meta FROM {NAMESPACE}.sessions"
        " ORDER BY updated_at DESC, ord DESC".encode()
    ).fetchall()
    return [SessionInfo(row[0], row[1], row[2], decode_meta(row[3])) for row in rows]

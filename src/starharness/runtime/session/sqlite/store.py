"""SqliteStore: session logs in one SQLite file (WAL), written in batches by a background thread."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import StoreClosedError, StoreWriteError
from ..queued import Append, Create, Delete, Op, QueuedWrites, describe
from ..store import SessionInfo, StoredSession
from .codec import EventRow, StoredRow, decode_log, decode_meta, encode_event, encode_meta
from .schema import open_database
from .writer import BatchWriter

_log = logging.getLogger("starharness.runtime.session")

T = TypeVar("T")


class SqliteStore(QueuedWrites):
    """Session logs in an SQLite file.

    Opening checks the file's application_id and schema version and refuses foreign or newer
    files. Appends are queued in memory and written by a background thread, many per
    transaction, at most `max_write_delay_s` later; `flush()` forces it and `aclose()` drains.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_write_delay_s: float = 0.1,
        max_batch: int = 2000,
        busy_timeout_ms: int = 5000,
    ) -> None:
        self.path = Path(path)
        self._conn = open_database(self.path, busy_timeout_ms)
        # One connection, used by the writer thread and by short reads; the lock serialises them.
        self._lock = threading.Lock()
        self._closed = False
        self.transactions = 0
        """Write transactions committed (a batch of appends is one)."""
        self.events_written = 0
        last: int | None = self._conn.execute("SELECT max(batch) FROM events").fetchone()[0]
        self._batch_number = last or 0
        self._writer: BatchWriter[Op] = BatchWriter(
            self._write_batch,
            max_delay_s=max_write_delay_s,
            max_batch=max_batch,
            name=f"session store {self.path}",
        )

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        max_write_delay_s: float = 0.1,
        max_batch: int = 2000,
        busy_timeout_ms: int = 5000,
    ) -> SqliteStore:
        """Open in a worker thread (creating the parent directory), so the event loop never waits
        on the disk."""

        def build() -> SqliteStore:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            return cls(
                path,
                max_write_delay_s=max_write_delay_s,
                max_batch=max_batch,
                busy_timeout_ms=busy_timeout_ms,
            )

        return await asyncio.to_thread(build)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    async def aclose(self) -> None:
        """Write everything queued, stop the writer thread and close the file."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._writer.aclose()
        finally:
            await asyncio.to_thread(self._close_connection)

    # -- reads ---------------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """Checked inline: one indexed lookup (queued creations are flushed before this matters:
        the service keeps open sessions itself)."""
        self._check_open()
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,))
            return row.fetchone() is not None

    async def load(self, session_id: str) -> StoredSession | None:
        self._check_open()
        await self._writer.flush()
        return await asyncio.to_thread(self._load, session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        self._check_open()
        await self._writer.flush()
        return await asyncio.to_thread(self._list)

    # -- worker-thread side -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the session store {self.path} is closed")

    def _close_connection(self) -> None:
        with self._lock:
            self._conn.close()

    def _load(self, session_id: str) -> StoredSession | None:
        with self._lock:
            conn = self._conn
            head = conn.execute(
                "SELECT created_at, meta FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if head is None:
                return None
            rows: list[StoredRow] = conn.execute(
                "SELECT seq, time, type, data, batch, crc FROM events"
                " WHERE session_id = ? ORDER BY seq",
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
                torn_from = log.torn_from
                _in_transaction(
                    conn,
                    lambda: conn.execute(
                        "DELETE FROM events WHERE session_id = ? AND seq >= ?",
                        (session_id, torn_from),
                    ),
                )
        return StoredSession(session_id, head[0], decode_meta(head[1]), log.events, log.dropped)

    def _list(self) -> list[SessionInfo]:
        with self._lock:
            rows: list[tuple[str, int, int, str]] = self._conn.execute(
                "SELECT id, created_at, updated_at, meta FROM sessions"
                " ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
        return [SessionInfo(row[0], row[1], row[2], decode_meta(row[3])) for row in rows]

    def _write_batch(self, ops: list[Op]) -> Exception | None:
        with self._lock:
            conn = self._conn
            self._batch_number += 1
            batch = self._batch_number
            try:
                written = _in_transaction(conn, lambda: self._apply(conn, ops, batch))
                refused: list[str] = []
            except sqlite3.IntegrityError:
                # One bad operation (say, a session id another process created) must not keep
                # every other session's events out of the file: write them one by one instead.
                written, refused = _in_transaction(conn, lambda: self._apply_each(conn, ops, batch))
            self.transactions += 1
            self.events_written += written
        if refused:
            _log.error("session store %s refused %d write(s): %s", self.path, len(refused), refused)
            return StoreWriteError(f"{len(refused)} write(s) refused: {'; '.join(refused[:3])}")
        return None

    def _apply_each(
        self, conn: sqlite3.Connection, ops: list[Op], batch: int
    ) -> tuple[int, list[str]]:
        written = 0
        refused: list[str] = []
        for op in ops:
            conn.execute("SAVEPOINT one_op")
            try:
                written += self._apply(conn, [op], batch)
            except sqlite3.IntegrityError as exc:
                conn.execute("ROLLBACK TO one_op")
                refused.append(f"{describe(op)}: {exc}")
            conn.execute("RELEASE one_op")
        return written, refused

    @staticmethod
    def _apply(conn: sqlite3.Connection, ops: list[Op], batch: int) -> int:
        rows: list[EventRow] = []
        active: dict[str, int] = {}
        written = 0

        def insert_rows() -> None:
            if rows:
                _insert_events(conn, rows)
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
                conn.execute(
                    "INSERT INTO sessions VALUES (?, ?, ?, ?)",
                    (op.session_id, op.created_at, op.created_at, encode_meta(op.meta)),
                )
            elif isinstance(op, Delete):
                conn.execute("DELETE FROM sessions WHERE id = ?", (op.session_id,))
                active.pop(op.session_id, None)
            else:
                _update_activity(conn, active)
                active.clear()
                _prune(conn, op.keep, op.protect)
        insert_rows()
        _update_activity(conn, active)
        return written


_ROWS_PER_INSERT = 64
"""Events per INSERT statement (7 values each, far under SQLite's 32,766 parameters)."""


@functools.cache
def _insert_sql(count: int) -> str:
    return "INSERT INTO events VALUES " + ",".join(("(?, ?, ?, ?, ?, ?, ?)",) * count)


def _insert_events(conn: sqlite3.Connection, rows: list[EventRow]) -> None:
    # Many rows per statement: one step of the statement (and one release of the GIL, which
    # the event loop's thread then contends for) per 64 rows instead of one per row.
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        part = rows[start : start + _ROWS_PER_INSERT]
        conn.execute(_insert_sql(len(part)), [value for row in part for value in row])


def _in_transaction(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work()
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return result


def _update_activity(conn: sqlite3.Connection, active: dict[str, int]) -> None:
    if active:
        conn.executemany(
            "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?",
            [(at, session_id) for session_id, at in active.items()],
        )


def _prune(conn: sqlite3.Connection, keep: int, protect: frozenset[str]) -> None:
    doomed: list[tuple[str]] = conn.execute(
        "SELECT id FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT -1 OFFSET ?", (keep,)
    ).fetchall()
    conn.executemany(
        "DELETE FROM sessions WHERE id = ?", [row for row in doomed if row[0] not in protect]
    )

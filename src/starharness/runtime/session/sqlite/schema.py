"""The session store's file format: identity, version check at open, and the tables."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ...credentials import create_owner_only
from ..errors import StoreError, StoreFormatError

_log = logging.getLogger("starharness.runtime.session")

APPLICATION_ID = int.from_bytes(b"StHa", "big")
"""Marks a file as a star-harness session store (`PRAGMA application_id`)."""
SCHEMA_VERSION = 1
"""`PRAGMA user_version` this build writes and reads; other versions are refused, never migrated."""

_TABLES = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        meta TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX sessions_by_activity ON sessions (updated_at)",
    # `batch` numbers the write transaction a row came in; `crc` covers the whole row. Together
    # they tell a torn last write (dropped) from damage in committed history (refused).
    """
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        time INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        batch INTEGER NOT NULL,
        crc INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) STRICT
    """,
)


def open_database(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """Open (creating if new) a session store file; refuses foreign or other-version files."""
    try:
        create_owner_only(path)  # transcripts hold what players said: not for other users
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the session store {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        # Identify the file before changing anything in it: a foreign file stays untouched.
        _check_or_initialise(conn, path)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            _log.info("session store %s runs in journal mode %s, not wal", path, mode)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreFormatError(
            f"{path} is not a star-harness session store: {exc}; it was left untouched"
        ) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _identity(conn: sqlite3.Connection) -> tuple[int, int]:
    app_id: int = conn.execute("PRAGMA application_id").fetchone()[0]
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return app_id, version


def _object_count(conn: sqlite3.Connection) -> int:
    count: int = conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]
    return count


def _check_ours(path: Path, app_id: int, version: int, objects: int) -> bool:
    """True when the file is ours at our version, False when it is a blank new database."""
    if app_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise StoreFormatError(
                f"{path} was written by a newer star-harness (session store schema {version};"
                f" this build reads {SCHEMA_VERSION}); upgrade star-harness or use another path."
                " The file was left untouched"
            )
        if version != SCHEMA_VERSION:
            raise StoreFormatError(
                f"{path} has session store schema {version}, which this build cannot read"
                f" (it reads {SCHEMA_VERSION}); the file was left untouched"
            )
        return True
    if app_id != 0:
        raise StoreFormatError(
            f"{path} belongs to another application (SQLite application_id {app_id:#010x},"
            f" expected {APPLICATION_ID:#010x}); refusing to use it as the session store"
        )
    if objects:
        raise StoreFormatError(
            f"{path} is an SQLite database of another application ({objects} schema objects and"
            " no star-harness application_id); refusing to use it as the session store"
        )
    return False


def _check_or_initialise(conn: sqlite3.Connection, path: Path) -> None:
    if _check_ours(path, *_identity(conn), _object_count(conn)):
        return
    # Blank file: create the schema, re-checking under the write lock in case another process
    # is initialising the same file right now.
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _check_ours(path, *_identity(conn), _object_count(conn)):
            for statement in _TABLES:
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

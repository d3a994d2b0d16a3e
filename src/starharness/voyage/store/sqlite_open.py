"""Creating, checking and rebuilding the world in a SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..content import WorldSeed
from .lore import install_sqlite_lore
from .schema_text import SCHEMA_VERSION
from .seeding import insert_seed
from .sqlite_conn import (
    SqliteDriver,
    connect,
    drop_all_tables,
    inspect,
    install_schema,
    refuse_unless_ours,
    upgrade_in_place,
    write_transaction,
)


def open_sqlite(path: Path, seed: WorldSeed, busy_timeout_s: float) -> sqlite3.Connection:
    """A connection to the world file at path, created and seeded when the file is new."""
    conn = connect(path, busy_timeout_s)
    try:
        state = inspect(conn)
        if state.is_empty:
            with write_transaction(conn):
                # Another process may have seeded the file since we looked.
                state = inspect(conn)
                if state.is_empty:
                    install_schema(conn)
                    insert_seed(SqliteDriver(conn), seed)
        if not state.is_empty:
            refuse_unless_ours(state, path)
            if state.user_version < SCHEMA_VERSION:
                upgrade_in_place(conn, path)
        install_sqlite_lore(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def rebuild_sqlite(path: Path, seed: WorldSeed, busy_timeout_s: float) -> None:
    """Drop every table of the file and write a fresh seed, in one transaction."""
    conn = connect(path, busy_timeout_s)
    try:
        state = inspect(conn)
        if not state.is_empty:
            refuse_unless_ours(state, path, allow_older=True)
        with write_transaction(conn):
            # Deferred checks let old tables go in any order; the fresh seed is checked at commit.
            conn.execute("PRAGMA defer_foreign_keys = ON")
            drop_all_tables(conn)
            install_schema(conn)
            insert_seed(SqliteDriver(conn), seed)
    finally:
        conn.close()

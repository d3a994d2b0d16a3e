"""The session store's tables in a PostgreSQL database: identity, version check, creation."""

from __future__ import annotations

from typing import Any

import psycopg

from ..errors import StoreFormatError
from .target import PostgresTarget

NAMESPACE = "star_harness_sessions"
"""The PostgreSQL schema holding the store, so it can share a database with the world."""
APPLICATION = "star-harness session store"
SCHEMA_VERSION = 1
"""The version this build writes and reads; other versions are refused, never migrated."""

# Serialises creation across processes opening one new database at once (the key is arbitrary
# but fixed: "StHa" and the store's number).
_INIT_LOCK = (int.from_bytes(b"StHa", "big"), 1)

_TABLES = (
    f"CREATE SCHEMA {NAMESPACE}",
    f"""
    CREATE TABLE {NAMESPACE}.identity (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        application text NOT NULL,
        version integer NOT NULL
    )
    """,
    # Numbers write transactions across every process writing the store (see the codec: a
    # batch tells a torn last write from damage in committed history).
    f"CREATE SEQUENCE {NAMESPACE}.batches",
    f"""
    CREATE TABLE {NAMESPACE}.sessions (
        ord bigint GENERATED ALWAYS AS IDENTITY,
        id text PRIMARY KEY,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        meta text NOT NULL
    )
    """,
    f"CREATE INDEX sessions_by_activity ON {NAMESPACE}.sessions (updated_at, ord)",
    # Data stays the exact JSON text the checksum covers (jsonb would re-encode it).
    f"""
    CREATE TABLE {NAMESPACE}.events (
        session_id text NOT NULL REFERENCES {NAMESPACE}.sessions (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        time bigint NOT NULL,
        type text NOT NULL,
        data text NOT NULL,
        batch bigint NOT NULL,
        crc bigint NOT NULL,
        PRIMARY KEY (session_id, seq)
    )
    """,
)


def check_or_create(conn: psycopg.Connection[tuple[Any, ...]], target: PostgresTarget) -> None:
    """Create the store in a database that has none; refuse one of another application or
    schema version (leaving it untouched)."""
    where = target.describe()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _INIT_LOCK)
        found = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (NAMESPACE,)
        ).fetchone()
        if found is None:
            for statement in _TABLES:
                conn.execute(statement.encode())
            conn.execute(
                f"INSERT INTO {NAMESPACE}.identity (application, version) VALUES (%s, %s)".encode(),
                (APPLICATION, SCHEMA_VERSION),
            )
            return
        has_identity = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (f"{NAMESPACE}.identity",)
        ).fetchone()
        if not has_identity or not has_identity[0]:
            raise StoreFormatError(
                f"{where} has a schema {NAMESPACE} that is not a star-harness session store"
                " (no identity table); it was left untouched"
            )
        row = conn.execute(
            f"SELECT application, version FROM {NAMESPACE}.identity".encode()
        ).fetchone()
    _check_identity(where, row)


def _check_identity(where: str, row: tuple[Any, ...] | None) -> None:
    if row is None or row[0] != APPLICATION:
        raise StoreFormatError(
            f"{where}: schema {NAMESPACE} belongs to another application"
            f" ({row[0] if row else 'no identity row'!r}); refusing to use it as the session store"
        )
    version: int = row[1]
    if version > SCHEMA_VERSION:
        raise StoreFormatError(
            f"{where} was written by a newer star-harness (session store schema {version}; this"
            f" build reads {SCHEMA_VERSION}); upgrade star-harness or use another database."
            " It was left untouched"
        )
    if version != SCHEMA_VERSION:
        raise StoreFormatError(
            f"{where} has session store schema {version}, which this build cannot read (it reads"
            f" {SCHEMA_VERSION}); it was left untouched"
        )

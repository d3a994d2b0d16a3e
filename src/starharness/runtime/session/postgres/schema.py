"""The session store's tables in a PostgreSQL database: identity, version check, creation."""

from __future__ import annotations

from typing import Any

import psycopg

from ..errors import StoreFormatError
from .identity import OwnedSchema
from .target import PostgresTarget

NAMESPACE = "star_harness_sessions"
"""The PostgreSQL schema holding the store, so it can share a database with the world."""
APPLICATION = "star-harness session store"
SCHEMA_VERSION = 1
"""The version this build writes and reads; other versions are refused, never migrated."""

# The creation lock's key is arbitrary but fixed: "StHa" and the store's number.
_OWNED = OwnedSchema(
    NAMESPACE,
    APPLICATION,
    "a star-harness session store",
    (int.from_bytes(b"StHa", "big"), 1),
    StoreFormatError,
)

_TABLES = (
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
    version = _OWNED.ensure(conn, where, SCHEMA_VERSION, _TABLES)
    if version is None:
        return
    _check_version(where, version)


def _check_version(where: str, version: int) -> None:
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

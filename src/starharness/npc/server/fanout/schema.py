"""The fan-out bus's tables in a PostgreSQL database: identity, version check, creation."""

from __future__ import annotations

from typing import Any

import psycopg

from ....runtime.session import StoreFormatError
from ....runtime.session.postgres import OwnedSchema, PostgresTarget

NAMESPACE = "star_harness_bus"
"""The PostgreSQL schema of the bus; it may share a database with sessions and the world."""
APPLICATION = "star-harness fan-out bus"
SCHEMA_VERSION = 1
"""The version this build writes and reads; other versions are refused, never migrated."""

# Creation is serialised across workers starting on one new database at once ("StHa", 3).
_OWNED = OwnedSchema(
    NAMESPACE,
    APPLICATION,
    "a star-harness fan-out bus",
    (int.from_bytes(b"StHa", "big"), 3),
    StoreFormatError,
)
TICK_LOCK = (int.from_bytes(b"StHa", "big"), 4)
"""Held (transaction-scoped) while any worker advances the world clock."""
NEWS_LOCK = (int.from_bytes(b"StHa", "big"), 5)
"""Held (transaction-scoped) by a publishing transaction: news ids commit in id order, so a
reader that has seen id N never later finds a smaller id committed."""

_TABLES = (
    f"""
    CREATE TABLE {NAMESPACE}.news (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        location_id text NOT NULL,
        headline text NOT NULL
    )
    """,
    # The schedule's next period; the worker whose UPDATE moves it runs that period's tick.
    f"""
    CREATE TABLE {NAMESPACE}.clock (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        next_tick_at timestamptz NOT NULL
    )
    """,
    f"INSERT INTO {NAMESPACE}.clock (next_tick_at) VALUES (now())",
    # Days advanced in the last minute, across workers (written under the tick lock).
    f"""
    CREATE TABLE {NAMESPACE}.spent (
        at timestamptz NOT NULL,
        days integer NOT NULL CHECK (days > 0)
    )
    """,
)


def check_or_create(conn: psycopg.Connection[tuple[Any, ...]], target: PostgresTarget) -> None:
    """Create the bus in a database that has none; refuse one of another application or
    schema version (leaving it untouched)."""
    where = target.describe()
    version = _OWNED.ensure(conn, where, SCHEMA_VERSION, _TABLES)
    if version is None:
        return
    if version != SCHEMA_VERSION:
        raise StoreFormatError(
            f"{where} has fan-out bus schema {version}; this build reads {SCHEMA_VERSION}"
            " (it was left untouched): run workers of one star-harness version on one bus"
        )

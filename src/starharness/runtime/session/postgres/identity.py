"""A PostgreSQL schema that one star-harness store owns, known by its identity row.

The session store, the workers' bus and a game's world each keep their tables in a schema of
their own, so they can share one database. Each schema holds an `identity` row naming the
application and its version; a schema of the same name without one is someone else's and is
never touched. Creation runs under an advisory transaction lock, so several processes opening
one new database at once create it once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

_Conn = psycopg.Connection[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class OwnedSchema:
    """Where a store lives (`namespace`), who it is (`application`) and how messages name it."""

    namespace: str
    application: str
    what: str
    """How a refusal names the store: "a star-harness session store"."""
    lock: tuple[int, int]
    """The advisory lock key serialising creation of this store."""
    error: type[Exception]
    """What a foreign schema raises (the store's own format error)."""

    def ensure(self, conn: _Conn, where: str, version: int, tables: Sequence[str]) -> int | None:
        """Create the schema with `tables` when the database has none (None); else the version
        stored there, for the caller to accept or refuse. One transaction, under the lock."""
        with conn.transaction():
            self.lock_creation(conn)
            stored = self.stored_version(conn, where)
            if stored is None:
                self.create(conn, version)
                for statement in tables:
                    conn.execute(statement.encode())
            return stored

    def lock_creation(self, conn: _Conn) -> None:
        """Take the creation lock for the rest of the open transaction."""
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", self.lock)

    def stored_version(self, conn: _Conn, where: str) -> int | None:
        """The schema version in the identity row; None when the schema does not exist.

        Raises `error` for a schema without an identity table or of another application.
        """
        namespace = self.namespace
        found = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (namespace,)
        ).fetchone()
        if found is None:
            return None
        has_identity = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (f"{namespace}.identity",)
        ).fetchone()
        if not has_identity or not has_identity[0]:
            raise self.error(
                f"{where} has a schema {namespace} that is not {self.what} (no identity table);"
                " it was left untouched: use another database"
            )
        row = conn.execute(
            f"SELECT application, version FROM {namespace}.identity".encode()
        ).fetchone()
        if row is None or row[0] != self.application:
            raise self.error(
                f"{where}: schema {namespace} belongs to another application"
                f" ({row[0] if row else 'no identity row'!r}); refusing to use it as {self.what}."
                " It was left untouched"
            )
        return int(row[1])

    def create(self, conn: _Conn, version: int) -> None:
        """Create the schema and its identity row (inside the creation lock's transaction)."""
        namespace = self.namespace
        conn.execute(f"CREATE SCHEMA {namespace}".encode())
        conn.execute(
            f"""CREATE TABLE {namespace}.identity (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                application text NOT NULL,
                version integer NOT NULL
            )""".encode()
        )
        conn.execute(
            f"INSERT INTO {namespace}.identity (application, version) VALUES (%s, %s)".encode(),
            (self.application, version),
        )

    def stamp(self, conn: _Conn, version: int) -> None:
        """Record that the schema is now at `version` (after an upgrade, inside its transaction)."""
        conn.execute(f"UPDATE {self.namespace}.identity SET version = %s".encode(), (version,))

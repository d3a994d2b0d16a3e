"""One session store test, both stores: the `store_place` fixture runs a test on SQLite and on
PostgreSQL (the latter skips without a test server, and fails so under CI)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from pg_support import pg_execute
from starharness.runtime.session import SessionsConfig, SqliteStore
from starharness.runtime.session.postgres import NAMESPACE, PostgresStore, PostgresTarget

AnyStore = SqliteStore | PostgresStore


@dataclass(frozen=True)
class StorePlace:
    """Where a test's store lives: an SQLite file or a PostgreSQL database, opened alike."""

    kind: str
    path: Path | None = None
    target: PostgresTarget | None = None

    async def open(self, *, max_write_delay_s: float = 0.1, max_batch: int = 2000) -> AnyStore:
        if self.target is not None:
            return await PostgresStore.open(
                self.target, max_write_delay_s=max_write_delay_s, max_batch=max_batch
            )
        assert self.path is not None
        return await SqliteStore.open(
            self.path, max_write_delay_s=max_write_delay_s, max_batch=max_batch
        )

    def sessions_config(self, *, max_write_delay_ms: int = 0) -> SessionsConfig:
        """The sessions plugin's config for this store."""
        if self.target is not None:
            return SessionsConfig(
                url=self.target.url,
                password_env=self.target.password_env,
                max_write_delay_ms=max_write_delay_ms,
            )
        return SessionsConfig(store="sqlite", path=self.path, max_write_delay_ms=max_write_delay_ms)

    def cli_args(self) -> list[str]:
        """`--sessions ...` naming this store on a command line."""
        if self.target is not None:
            return ["--sessions", self.target.url, "--password-env", self.target.password_env or ""]
        return ["--sessions", str(self.path)]

    def locator(self) -> list[str]:
        """Arguments that let a child process open the same store (see `open_from_argv`)."""
        if self.target is not None:
            return ["postgresql", self.target.url, self.target.password_env or ""]
        return ["sqlite", str(self.path)]

    def sql(self, statement: str, *args: object) -> list[tuple[object, ...]]:
        """Run one statement on the store directly; `{events}` names the events table and `?`
        marks a parameter, in both dialects."""
        if self.target is not None:
            text = statement.format(events=f"{NAMESPACE}.events").replace("?", "%s")
            return pg_execute(self.target, text, *args)
        assert self.path is not None
        conn = sqlite3.connect(self.path)
        try:
            rows = conn.execute(statement.format(events="events"), args).fetchall()
            conn.commit()
        finally:
            conn.close()
        return rows

    def stored_seqs(self) -> list[int]:
        rows = self.sql("SELECT seq FROM {events} ORDER BY session_id, seq")
        return [int(row[0]) for row in rows]  # pyright: ignore[reportArgumentType]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_place(request: pytest.FixtureRequest, tmp_path: Path) -> StorePlace:
    if request.param == "sqlite":
        return StorePlace("sqlite", path=tmp_path / "s.db")
    target: PostgresTarget = request.getfixturevalue("pg_target")
    return StorePlace("postgresql", target=target)


CHILD_OPEN = """
from starharness.runtime.session import SessionsConfig, SqliteStore
from starharness.runtime.session.postgres import PostgresStore, PostgresTarget

async def open_from_argv(args, **options):
    if args[0] == "postgresql":
        return await PostgresStore.open(PostgresTarget(args[1], args[2] or None), **options)
    return await SqliteStore.open(args[1], **options)
"""
"""Source of `open_from_argv(args)` for a child process given `StorePlace.locator()`."""

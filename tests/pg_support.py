"""PostgreSQL for the tests: `.ci/run` (or `bash .ci/postgres CMD`) starts a throwaway cluster
and exports STAR_HARNESS_TEST_PG; each test gets a fresh database of its own.

Without the variable these tests skip, except under CI=true, where they fail: CI must run them.
"""

from __future__ import annotations

import os
import pwd
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from starharness.runtime.session.postgres import PostgresTarget

URL_VARIABLE = "STAR_HARNESS_TEST_PG"
PASSWORD_VARIABLE = "STAR_HARNESS_TEST_PG_PASSWORD"


def _server_url() -> str:
    url = os.environ.get(URL_VARIABLE)
    if url:
        return url
    reason = (
        f"{URL_VARIABLE} is not set: run under .ci/run, or `bash .ci/postgres uv run pytest ...`"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}")
    pytest.skip(reason)


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    # Made as every connection of ours is (PostgresTarget), so the tests meet its settings too.
    password_env = PASSWORD_VARIABLE if os.environ.get(PASSWORD_VARIABLE) else None
    return PostgresTarget(url, password_env=password_env).connect(autocommit=True)


def database_url(url: str, dbname: str) -> str:
    """The server's URL with another database name (no password in it)."""
    params = conninfo_to_dict(url)
    host, port, user = params.get("host", ""), params.get("port", ""), params.get("user", "")
    return f"postgresql://{user}@{host}:{port}/{dbname}"


@pytest.fixture
def pg_target() -> Iterator[PostgresTarget]:
    """A new, empty database on the test server, dropped after the test."""
    url = _server_url()
    name = f"t_{uuid.uuid4().hex[:16]}"
    with _admin(url) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield PostgresTarget(database_url(url, name), password_env=PASSWORD_VARIABLE)
    finally:
        with _admin(url) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def pg_execute(target: PostgresTarget, statement: str, *params: object) -> list[tuple[object, ...]]:
    """Run one statement on the target database directly (for tests that tamper or inspect)."""
    with target.connect(autocommit=True) as conn:
        cursor = conn.execute(statement.encode(), params or None)
        return list(cursor.fetchall()) if cursor.description else []


class PgCluster:
    """The test server's own cluster, stopped and started again by a test (an outage).

    Found from the server itself (its data directory and binaries); under root the cluster
    belongs to its data directory's owner, as `.ci/postgres` made it.
    """

    def __init__(self) -> None:
        with _admin(_server_url()) as conn:
            data = conn.execute("SHOW data_directory").fetchone()
            bindir = conn.execute("SELECT setting FROM pg_config WHERE name = 'BINDIR'").fetchone()
        assert data is not None and bindir is not None
        self.data_dir = Path(str(data[0]))
        self._pg_ctl = str(Path(str(bindir[0])) / "pg_ctl")
        # What the server was started with (port, socket directory, settings), to start it again.
        argv = shlex.split((self.data_dir / "postmaster.opts").read_text(encoding="utf-8"))
        options = list(argv[1:])
        if "-D" in options:
            at = options.index("-D")
            del options[at : at + 2]
        self._options = shlex.join(options)
        self._as: list[str] = []
        if os.geteuid() == 0:
            owner = pwd.getpwuid(self.data_dir.stat().st_uid).pw_name
            self._as = ["runuser", "-u", owner, "--"]

    def stop(self) -> None:
        """Stop the server now (`-m fast`: sessions are cut, as a crash or restart cuts them)."""
        self._pg_ctl_run("-m", "fast", "-w", "stop")

    def start(self) -> None:
        """Start it again with its old options; returns once it accepts connections."""
        log = self.data_dir.parent / "server.log"
        self._pg_ctl_run("-w", "-l", str(log), "-o", self._options, "start")

    def _pg_ctl_run(self, *args: str) -> None:
        subprocess.run(
            [*self._as, self._pg_ctl, "-D", str(self.data_dir), *args],
            cwd="/",
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=60,
        )

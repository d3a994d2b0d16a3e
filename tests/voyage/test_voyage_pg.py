"""The world in PostgreSQL: schema `voyage`, its identity row, creation once, seeding, retry."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import ValidationError
from typer.testing import CliRunner

from pg_support import pg_execute
from starharness.cli import seed as seed_command
from starharness.cli._errors import CliError
from starharness.npc import ServerSettings
from starharness.npc.client import connect
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import (
    SchemaVersionError,
    VoyageWorld,
    open_server_world,
    seed_server_world,
)
from starharness.voyage.content import OMEGA_STATION, PLAYER_ID
from starharness.voyage.store import (
    APPLICATION,
    SCHEMA_VERSION,
    WorldBusyError,
    WorldConflictError,
    WorldTx,
)
from world_support import CHILD_OPEN, WorldPlace


def _open(target: PostgresTarget) -> VoyageWorld:
    return open_server_world(target)


def test_a_blank_database_gets_schema_voyage_with_its_identity(pg_target: PostgresTarget) -> None:
    with _open(pg_target) as world:
        assert world.blocks_on_network and world.path is None
        assert world.where == pg_target.describe()
        assert world.player_view(PLAYER_ID)["credits"] == 12_000
    assert pg_execute(pg_target, "SELECT application, version FROM voyage.identity") == [
        (APPLICATION, SCHEMA_VERSION)
    ]
    # Money columns hold more than 32 bits, as SQLite's INTEGER does.
    with _open(pg_target) as world, world.transaction() as tx:
        tx.add_credits(PLAYER_ID, 10**15)
    with _open(pg_target) as world, world.snapshot() as r:
        assert r.credits(PLAYER_ID) == 12_000 + 10**15


@pytest.mark.parametrize(
    # Version 1 predates in-place upgrades (test_voyage_schema_upgrade.py has those).
    ("version", "words"),
    [(SCHEMA_VERSION + 1, "newer"), (1, "older.*no upgrade in place")],
)
def test_another_schema_version_is_refused_untouched(
    pg_target: PostgresTarget, version: int, words: str
) -> None:
    _open(pg_target).close()
    pg_execute(pg_target, "UPDATE voyage.identity SET version = %s", version)
    with pytest.raises(SchemaVersionError, match=words) as raised:
        _open(pg_target)
    assert pg_target.describe() in str(raised.value)
    assert pg_execute(pg_target, "SELECT version FROM voyage.identity") == [(version,)]
    if version > SCHEMA_VERSION:
        with pytest.raises(SchemaVersionError, match="newer"):
            seed_server_world(pg_target)
        assert pg_execute(pg_target, "SELECT version FROM voyage.identity") == [(version,)]
    else:  # an older world is what seed rebuilds
        seed_server_world(pg_target)
        _open(pg_target).close()


def test_a_foreign_schema_voyage_is_refused_and_left_untouched(pg_target: PostgresTarget) -> None:
    pg_execute(pg_target, "CREATE SCHEMA voyage")
    pg_execute(pg_target, "CREATE TABLE voyage.mine (x integer)")
    pg_execute(pg_target, "INSERT INTO voyage.mine VALUES (7)")
    for attempt in (_open, seed_server_world):
        with pytest.raises(SchemaVersionError, match="not an Omega station world"):
            attempt(pg_target)
    assert pg_execute(pg_target, "SELECT x FROM voyage.mine") == [(7,)]


def test_another_applications_identity_is_refused(pg_target: PostgresTarget) -> None:
    _open(pg_target).close()
    pg_execute(pg_target, "UPDATE voyage.identity SET application = 'someone else'")
    with pytest.raises(SchemaVersionError, match="another application"):
        _open(pg_target)


_OPENER = (
    CHILD_OPEN
    + """
import sys
world = open_from_argv(sys.argv[1:4])
print(len(world.npcs()), flush=True)
world.close()
"""
)


def test_several_processes_opening_a_blank_database_create_it_once(
    pg_target: PostgresTarget,
) -> None:
    place = WorldPlace("postgresql", target=pg_target)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, *place.locator()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [child.communicate(timeout=120) for child in children]
    npcs = sum(1 for a in OMEGA_STATION.actors if a.kind == "npc")
    assert [
        (child.returncode, out.strip()) for child, (out, _) in zip(children, results, strict=True)
    ] == [(0, str(npcs))] * 4, results
    assert pg_execute(pg_target, "SELECT count(*) FROM voyage.identity") == [(1,)]
    assert pg_execute(pg_target, "SELECT count(*) FROM voyage.clock") == [(1,)]
    assert pg_execute(pg_target, "SELECT count(*) FROM voyage.actors") == [
        (len(OMEGA_STATION.actors),)
    ]


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:  # keeps `seed` a subcommand
        pass

    seed_command.register(app)
    return app


def test_seed_on_postgresql_rebuilds_in_one_transaction(
    app: typer.Typer, pg_target: PostgresTarget
) -> None:
    args = WorldPlace("postgresql", target=pg_target).cli_args()
    result = CliRunner().invoke(app, ["seed", *args])
    assert result.exit_code == 0, result.output
    assert pg_target.describe() in result.output
    with _open(pg_target) as world, world.transaction() as tx:
        tx.add_credits(PLAYER_ID, -5_000)
    result = CliRunner().invoke(app, ["seed", *args])
    assert result.exit_code == 0, result.output
    with _open(pg_target) as world:
        assert world.player_view(PLAYER_ID)["credits"] == 12_000


def test_a_password_in_the_world_url_is_refused_without_repeating_it(app: typer.Typer) -> None:
    url = "postgresql://omega:hunter2secret@db.example:5432/world"
    result = CliRunner().invoke(app, ["seed", "--world", url])
    assert isinstance(result.exception, CliError)
    assert "password" in str(result.exception)
    assert "hunter2secret" not in str(result.exception) + result.output
    with pytest.raises(ValidationError) as raised:
        ServerSettings(world=url)
    assert "password" in str(raised.value) and "hunter2secret" not in str(raised.value)
    settings = ServerSettings(world="postgresql://omega@db.example:5432/world")
    place = settings.world_place()
    assert isinstance(place, PostgresTarget)
    assert place.describe() == "postgresql://db.example:5432/world"


def test_a_conflict_reruns_the_whole_action(pg_target: PostgresTarget) -> None:
    """A reads the day, B commits a new day, A writes the day: A's work runs again, from the
    top, and its second run sees B's day."""
    first, second = _open(pg_target), _open(pg_target)
    read_once = threading.Event()
    b_done = threading.Event()
    runs: list[int] = []

    def bump() -> None:
        assert read_once.wait(30)
        with second.transaction() as tx:
            tx.set_day(tx.day() + 1)
        b_done.set()

    def next_day(tx: WorldTx) -> int:
        day = tx.day()
        runs.append(day)
        if len(runs) == 1:
            read_once.set()
            assert b_done.wait(30)
        tx.set_day(day + 1)
        return day + 1

    thread = threading.Thread(target=bump)
    try:
        thread.start()
        start_day = OMEGA_STATION.start_day
        assert first.run_action(next_day) == start_day + 2
        assert runs == [start_day, start_day + 1]
    finally:
        thread.join(30)
        first.close()
        second.close()


def test_an_action_that_always_conflicts_ends_busy_with_nothing_written(
    pg_target: PostgresTarget,
) -> None:
    runs: list[int] = []

    def doomed(tx: WorldTx) -> None:
        runs.append(1)
        tx.add_credits(PLAYER_ID, -1_000)
        raise WorldConflictError("simulated serialization failure")

    with _open(pg_target) as world:
        with pytest.raises(WorldBusyError, match="busy"):
            world.run_action(doomed)
        assert len(runs) == 8
        with world.snapshot() as r:
            assert r.credits(PLAYER_ID) == 12_000


def test_a_swallowed_database_error_cannot_commit(pg_target: PostgresTarget) -> None:
    with _open(pg_target) as world:
        with pytest.raises(Exception), world.transaction() as tx:  # noqa: B017
            tx.add_credits(PLAYER_ID, -1_000)
            # Game code that hides a failure must not get half an action committed.
            with contextlib.suppress(Exception):
                tx._rows("SELECT no_such_column FROM actors")  # pyright: ignore[reportPrivateUsage]
        with world.snapshot() as r:
            assert r.credits(PLAYER_ID) == 12_000


def test_serve_keeps_its_world_in_postgresql(pg_target: PostgresTarget, tmp_path: Path) -> None:
    """The real command: `serve --world postgresql://... --world-password-env NAME`."""
    ready_file = tmp_path / "ready.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    world = WorldPlace("postgresql", target=pg_target).cli_args()
    command = ["serve", "--port", "0", *world, "--ready-file", str(ready_file)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "starharness.cli", *command],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready_file.exists():
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "serve did not become ready"
            time.sleep(0.05)
        welcome = asyncio.run(_welcome(json.loads(ready_file.read_text())["ws"]))
        assert welcome["t"] == "welcome" and welcome["hud"]["credits"] == 12_000
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert f"world      {pg_target.describe()}" in out
    assert "Traceback" not in out
    assert not (tmp_path / "home" / "voyage" / "world.db").exists()  # no file world was made
    assert pg_execute(pg_target, "SELECT count(*) FROM voyage.identity") == [(1,)]


async def _welcome(url: str) -> dict[str, Any]:
    async with connect(url, open_timeout=10) as ws:
        await ws.hello(PLAYER_ID)
        return json.loads(await ws.receive_text(10))


def test_serve_on_a_foreign_world_schema_names_the_seed_fix(
    pg_target: PostgresTarget, tmp_path: Path
) -> None:
    """A stored world this version cannot use is the one failure that seeding mends."""
    pg_execute(pg_target, "CREATE SCHEMA voyage")
    pg_execute(pg_target, "CREATE TABLE voyage.mine (x integer)")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    world = WorldPlace("postgresql", target=pg_target).cli_args()
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "serve", "--port", "0", *world],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert f"the world database {pg_target.describe()}" in line
    assert "not an Omega station world" in line
    assert "star-harness seed --world" in line and "that erases it" in line
    assert pg_execute(pg_target, "SELECT count(*) FROM voyage.mine") == [(0,)]


def test_pooled_connections_the_server_dropped_are_replaced(pg_target: PostgresTarget) -> None:
    with _open(pg_target) as world:
        assert world.player_view(PLAYER_ID)["credits"] == 12_000  # a connection now idles
        pg_execute(
            pg_target,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        assert world.player_view(PLAYER_ID)["credits"] == 12_000
        pg_execute(
            pg_target,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        world.run_action(lambda tx: tx.add_credits(PLAYER_ID, -1))
        assert world.player_view(PLAYER_ID)["credits"] == 11_999

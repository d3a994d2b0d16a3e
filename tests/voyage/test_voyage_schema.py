"""The schema refuses impossible states even to raw SQL, and foreign or newer files are refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from starharness.voyage import SchemaVersionError, VoyageWorld, open_world, seed_world
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store import APPLICATION_ID, SCHEMA_VERSION


@pytest.fixture
def raw(world: VoyageWorld, world_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(world_path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        yield conn
    finally:
        conn.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE actors SET credits = -1 WHERE id = 'player-1'",
        "UPDATE actors SET credits = 'lots' WHERE id = 'player-1'",
        "UPDATE actors SET kind = 'ghost' WHERE id = 'player-1'",
        "UPDATE market SET stock = -1 WHERE location_id = 'omega-station' AND good_id = 'fuel'",
        "UPDATE market SET price = 0 WHERE location_id = 'omega-station' AND good_id = 'fuel'",
        "UPDATE cargo SET qty = -1 WHERE actor_id = 'npc-karsk' AND good_id = 'fuel'",
        "INSERT INTO cargo (actor_id, good_id, qty) VALUES ('player-1', 'fuel', -5)",
        "UPDATE attitudes SET score = 101 WHERE npc_id = 'npc-karsk' AND target_id = 'player-1'",
        "UPDATE attitudes SET score = -101 WHERE npc_id = 'npc-karsk' AND target_id = 'player-1'",
        "INSERT INTO attitudes (npc_id, target_id, score) VALUES ('npc-vex', 'npc-brandt', 150)",
        "INSERT INTO memories (npc_id, about_id, day, kind, text) VALUES ('nobody', 'player-1', 1, "
        "'note', 'x')",
        "INSERT INTO cargo (actor_id, good_id, qty) VALUES ('player-1', 'unobtainium', 1)",
        "UPDATE quests SET status = 'accepted' WHERE id = 'quest-medgel'",
        "INSERT INTO clock (id, day) VALUES (2, 1)",
        "INSERT INTO audit (day, at, action, actor_id, args, ok) "
        "VALUES (1, 0, 'a', 'b', '{oops', 1)",
    ],
)
def test_raw_sql_cannot_create_impossible_states(raw: sqlite3.Connection, statement: str) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        raw.execute(statement)


def test_raw_sql_can_still_make_legal_changes(raw: sqlite3.Connection, world: VoyageWorld) -> None:
    raw.execute("UPDATE actors SET credits = 0 WHERE id = ?", (PLAYER_ID,))
    raw.execute(
        "UPDATE attitudes SET score = 100 WHERE npc_id = ? AND target_id = ?", (SMUGGLER, PLAYER_ID)
    )
    assert world.player_view(PLAYER_ID)["credits"] == 0
    assert world.attitude(SMUGGLER, PLAYER_ID) == 100


def test_open_world_seeds_once(world_path: Path) -> None:
    first = open_world(world_path)
    with first.transaction() as tx:
        tx.add_credits(PLAYER_ID, 500)
    first.close()
    second = open_world(world_path)
    try:
        assert second.player_view(PLAYER_ID)["credits"] == 12_500
        assert len(second.npcs()) == len({card.id for card in second.npcs()}) == 4
    finally:
        second.close()


def test_open_world_defaults_to_star_harness_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    with open_world(None) as world:
        assert world.path == tmp_path / "home" / "voyage" / "world.db"
        assert world.has_player(PLAYER_ID)
    assert (tmp_path / "home" / "voyage" / "world.db").is_file()


def _set_header(path: Path, *, application_id: int, user_version: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA application_id = {application_id}")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.close()


def test_a_newer_world_is_refused_by_open_and_seed(world_path: Path) -> None:
    open_world(world_path).close()
    _set_header(world_path, application_id=APPLICATION_ID, user_version=SCHEMA_VERSION + 1)
    with pytest.raises(SchemaVersionError, match="newer star-harness"):
        open_world(world_path)
    with pytest.raises(SchemaVersionError, match="newer star-harness"):
        seed_world(world_path)


def test_an_older_world_is_refused_by_open_and_rebuilt_by_seed(world_path: Path) -> None:
    # Version 1 predates in-place upgrades (test_voyage_schema_upgrade.py has those).
    open_world(world_path).close()
    _set_header(world_path, application_id=APPLICATION_ID, user_version=1)
    with pytest.raises(SchemaVersionError, match=r"older world.*no upgrade.*star-harness seed"):
        open_world(world_path)
    seed_world(world_path)
    with open_world(world_path) as world:
        assert world.player_view(PLAYER_ID)["credits"] == 12_000


def test_a_foreign_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.close()
    with pytest.raises(SchemaVersionError, match="not an Omega station world"):
        open_world(path)
    with pytest.raises(SchemaVersionError, match="not an Omega station world"):
        seed_world(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT text FROM notes").fetchall() == [("keep me",)]
    conn.close()


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "world.db"
    path.write_bytes(b"definitely not a database " * 50)
    with pytest.raises(SchemaVersionError, match="not a SQLite database"):
        open_world(path)


def test_seed_world_rebuilds_a_used_world(world_path: Path) -> None:
    with open_world(world_path) as world, world.transaction() as tx:
        tx.add_credits(PLAYER_ID, -2_000)
        tx.remember(SMUGGLER, PLAYER_ID, "They owe me.")
    seed_world(world_path)
    with open_world(world_path) as world, world.snapshot() as reader:
        assert reader.credits(PLAYER_ID) == 12_000
        assert reader.memories(SMUGGLER, PLAYER_ID) == []
        assert reader.day() == 1

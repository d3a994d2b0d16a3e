"""An older world is upgraded in place when every step is known, losing nothing, on both stores
(test_voyage_schema.py and test_voyage_pg.py refuse one with no path); the director's
once-a-day check reads the audit through its index."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pg_support import pg_execute
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import open_server_world, open_world
from starharness.voyage.content import OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.store import SCHEMA_VERSION
from starharness.voyage.store.schema_text import UPGRADES, upgrade_statements

_INDEX = "audit_by_action_day"
_ARGS = json.dumps({"location_id": OMEGA, "good_id": "fuel", "price": 470})
_AUDIT_ROW = (
    "INSERT INTO {schema}audit (day, at, action, actor_id, target_id, args, ok, reason, summary) "
    "VALUES (1, 0, 'set_price', 'director', NULL, {args}, 1, NULL, 'set')"
)


_MEMORY_COLUMNS = ("importance", "source_id", "hops", "origin_id")
"""What version 4 added to memories (witnesses and gossip)."""
_MEMORY_ROW = (
    "INSERT INTO {schema}memories (npc_id, about_id, day, kind, text) "
    "VALUES ('npc-karsk', 'player-1', 1, 'trade', 'They bought 2 fuel cells.')"
)


def _as_version_2(path: Path) -> None:
    """Turn a current world file back into what version 2 wrote, with a trade-like audit row
    and a memory."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(f"DROP INDEX {_INDEX}")
        conn.execute("DROP INDEX memories_by_origin")
        conn.execute("DROP INDEX memories_by_npc")
        for column in _MEMORY_COLUMNS:
            conn.execute(f"ALTER TABLE memories DROP COLUMN {column}")
        conn.execute(_MEMORY_ROW.format(schema=""))
        conn.execute(_AUDIT_ROW.format(schema="", args="?"), (_ARGS,))
        conn.execute("UPDATE actors SET credits = 12345 WHERE id = ?", (PLAYER_ID,))
        conn.execute("PRAGMA user_version = 2")
    finally:
        conn.close()


def _header_and_indexes(path: Path) -> tuple[int, set[str]]:
    conn = sqlite3.connect(path)
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        names = {
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
    finally:
        conn.close()
    return version, names


def test_every_version_from_two_has_an_upgrade_path() -> None:
    assert all(upgrade_statements(v) is not None for v in range(2, SCHEMA_VERSION + 1))
    assert upgrade_statements(SCHEMA_VERSION) == []
    assert upgrade_statements(1) is None  # version 1 predates in-place upgrades
    assert set(UPGRADES) == set(range(2, SCHEMA_VERSION))


def test_a_version_2_world_file_is_upgraded_in_place_and_keeps_its_state(
    world_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    open_world(world_path).close()
    _as_version_2(world_path)
    version, indexes = _header_and_indexes(world_path)
    assert version == 2 and _INDEX not in indexes

    caplog.set_level("INFO", "starharness.voyage.store")
    with open_world(world_path) as world, world.snapshot() as reader:
        assert reader.credits(PLAYER_ID) == 12345
        assert reader.count_committed("set_price", 1, location_id=OMEGA, good_id="fuel") == 1
        (memory,) = reader.memories(SMUGGLER, PLAYER_ID)
        assert (memory.text, memory.importance, memory.hops) == ("They bought 2 fuel cells.", 10, 0)
    version, indexes = _header_and_indexes(world_path)
    assert version == SCHEMA_VERSION
    assert {_INDEX, "memories_by_origin", "memories_by_npc"} <= indexes
    assert f"from schema version 2 to {SCHEMA_VERSION}" in caplog.text
    # Opening again is a plain open: nothing more to do, nothing logged.
    caplog.clear()
    open_world(world_path).close()
    assert "upgraded" not in caplog.text


def test_the_once_a_day_count_reads_the_audit_through_its_index(world_path: Path) -> None:
    open_world(world_path).close()
    conn = sqlite3.connect(world_path)
    try:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM audit WHERE action = ? AND day = ? "
            "AND ok = 1 AND json_extract(args, ?) = ?",
            ("set_price", 1, "$.good_id", "fuel"),
        ).fetchall()
    finally:
        conn.close()
    assert any(_INDEX in str(row[-1]) for row in plan), plan


def test_a_version_2_postgres_world_is_upgraded_in_place(pg_target: PostgresTarget) -> None:
    open_server_world(pg_target).close()
    pg_execute(pg_target, f"DROP INDEX voyage.{_INDEX}")
    pg_execute(pg_target, "DROP INDEX voyage.memories_by_origin")
    pg_execute(pg_target, "DROP INDEX voyage.memories_by_npc")
    for column in _MEMORY_COLUMNS:
        pg_execute(pg_target, f"ALTER TABLE voyage.memories DROP COLUMN {column}")
    pg_execute(pg_target, _MEMORY_ROW.format(schema="voyage."))
    pg_execute(pg_target, _AUDIT_ROW.format(schema="voyage.", args="%s"), _ARGS)
    pg_execute(pg_target, "UPDATE voyage.actors SET credits = 12345 WHERE id = %s", PLAYER_ID)
    pg_execute(pg_target, "UPDATE voyage.identity SET version = 2")

    with open_server_world(pg_target) as world, world.snapshot() as reader:
        assert reader.credits(PLAYER_ID) == 12345
        assert reader.count_committed("set_price", 1, location_id=OMEGA, good_id="fuel") == 1
        (memory,) = reader.memories(SMUGGLER, PLAYER_ID)
        assert (memory.importance, memory.hops, memory.origin_id) == (10, 0, None)
    assert pg_execute(pg_target, "SELECT version FROM voyage.identity") == [(SCHEMA_VERSION,)]
    found = pg_execute(
        pg_target, "SELECT 1 FROM pg_indexes WHERE schemaname = 'voyage' AND indexname = %s", _INDEX
    )
    assert found == [(1,)]

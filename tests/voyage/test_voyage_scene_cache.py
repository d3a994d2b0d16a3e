"""The scene's NPC side is read once per world state: every commit that may change it, by
anyone, is seen next; memory-only commits keep it."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.content import DOCK_MASTER, OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.store.scene import NPC_SIDE_TABLES, gather_npc_side
from starharness.voyage.store.sqlite_conn import ANY_TABLE, written_table


def test_the_next_scene_shows_our_own_commits_to_the_npc_side(placed_world: VoyageWorld) -> None:
    world = placed_world
    before = world.scene(SMUGGLER, PLAYER_ID)
    assert world.scene(SMUGGLER, PLAYER_ID) == before
    with world.transaction() as tx:
        tx.set_price(OMEGA, "fuel", 777)
        tx.add_credits(SMUGGLER, 1_000)
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert "fuel cells [fuel] 40 at 777" in scene
    assert "Jonah Karsk: 49,000 credits." in scene
    world.run_action(lambda tx: tx.add_world_event(OMEGA, "A freighter docks with coffee."))
    assert "A freighter docks with coffee." in world.scene(SMUGGLER, PLAYER_ID)
    world.run_action(lambda tx: tx.set_day(5))
    assert world.scene(SMUGGLER, PLAYER_ID).startswith("Day 5. ")
    world.tick(1)
    assert world.scene(SMUGGLER, PLAYER_ID).startswith("Day 6. ")


def test_a_rolled_back_write_leaves_the_scene_as_it_was(placed_world: VoyageWorld) -> None:
    before = placed_world.scene(SMUGGLER, PLAYER_ID)
    with pytest.raises(RuntimeError), placed_world.transaction() as tx:
        tx.set_price(OMEGA, "fuel", 777)
        raise RuntimeError("changed my mind")
    assert placed_world.scene(SMUGGLER, PLAYER_ID) == before


def test_the_next_scene_shows_another_worlds_commit_to_the_same_file(
    world: VoyageWorld, world_path: Path
) -> None:
    assert "fuel cells [fuel] 40 at 450" in world.scene(SMUGGLER, PLAYER_ID)
    with open_world(world_path) as other, other.transaction() as tx:
        tx.set_price(OMEGA, "fuel", 777)
    assert "fuel cells [fuel] 40 at 777" in world.scene(SMUGGLER, PLAYER_ID)


def test_the_next_scene_shows_a_commit_by_any_connection(
    world: VoyageWorld, world_path: Path
) -> None:
    # Another process (or tool) writing the file: nothing of star-harness on that side.
    assert "Jonah Karsk: 48,000 credits." in world.scene(SMUGGLER, PLAYER_ID)
    conn = sqlite3.connect(world_path, isolation_level=None)
    try:
        conn.execute("UPDATE actors SET credits = 123 WHERE id = ?", (SMUGGLER,))
    finally:
        conn.close()
    assert "Jonah Karsk: 123 credits." in world.scene(SMUGGLER, PLAYER_ID)


def test_the_player_side_is_read_for_every_scene(placed_world: VoyageWorld) -> None:
    world = placed_world
    assert "You have never dealt with them." in world.scene(SMUGGLER, PLAYER_ID)
    world.run_action(lambda tx: tx.remember(SMUGGLER, PLAYER_ID, "They asked about spice."))
    world.run_action(lambda tx: tx.set_attitude(SMUGGLER, PLAYER_ID, 70))
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert "- day 1: They asked about spice." in scene
    assert "Attitude to the player: 70 (trusted)." in scene


# -- memory-only commits (every closing encounter makes one) keep the NPC side ---------------

_VISIT = "They came by and talked; no deal was made."

# One write per table the NPC side reads, each changing what the scene shows (on SQLite, raw
# statements through the world's own transaction: the store has no helper for seeded tables).
_CHANGES: dict[str, tuple[str, str, tuple[object, ...], str]] = {
    "actors": (
        SMUGGLER,
        "UPDATE actors SET credits = 123 WHERE id = ?",
        (SMUGGLER,),
        "Jonah Karsk: 123 credits.",
    ),
    "cargo": (
        SMUGGLER,
        "UPDATE cargo SET qty = 39 WHERE actor_id = ? AND good_id = 'fuel'",
        (SMUGGLER,),
        "fuel cells [fuel] 39 at 450",
    ),
    "clock": (SMUGGLER, "UPDATE clock SET day = 9 WHERE id = 1", (), "Day 9. "),
    "goods": (
        SMUGGLER,
        "UPDATE goods SET name = 'fuel rods' WHERE id = 'fuel'",
        (),
        "fuel rods [fuel] 40 at 450",
    ),
    "intel": (
        SMUGGLER,
        "UPDATE intel SET title = 'patrol rota' WHERE id = 'intel-patrols'",
        (),
        'rumour "patrol rota"',
    ),
    "locations": (
        SMUGGLER,
        "UPDATE locations SET name = 'Omega prime' WHERE id = ?",
        (OMEGA,),
        "Day 1. Omega prime: ",
    ),
    "market": (
        SMUGGLER,
        "UPDATE market SET price = 777 WHERE location_id = ? AND good_id = 'fuel'",
        (OMEGA,),
        "fuel cells [fuel] 40 at 777",
    ),
    "quests": (
        SMUGGLER,
        "UPDATE quests SET reward = 15000 WHERE id = 'quest-medgel'",
        (),
        'for a clinic", reward 15,000',
    ),
    "routes": (
        DOCK_MASTER,
        "UPDATE routes SET fare = 1900 WHERE from_id = ? AND to_id = 'ceres-deep'",
        (OMEGA,),
        "Ceres Deep [ceres-deep] 1,900, 1d",
    ),
    "trade_lines": (
        SMUGGLER,
        "DELETE FROM trade_lines WHERE npc_id = ? AND good_id = 'fuel'",
        (SMUGGLER,),
        "units at going price: medical gel [medgel] 12",
    ),
    "world_events": (
        SMUGGLER,
        "INSERT INTO world_events (day, location_id, kind, headline) VALUES (1, ?, 'news', ?)",
        (OMEGA, "A freighter docks with coffee."),
        "A freighter docks with coffee.",
    ),
}


@contextmanager
def _statements(world: VoyageWorld) -> Iterator[list[str]]:
    """Every statement the world's SQLite connection runs inside the block."""
    seen: list[str] = []
    conn = world._backend._driver.conn  # type: ignore[attr-defined]
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)


def _visit(world: VoyageWorld, npc_id: str = SMUGGLER) -> None:
    world.run_action(lambda tx: tx.remember(npc_id, PLAYER_ID, _VISIT, kind="visit"))


def test_a_memory_commit_shows_in_the_next_scene_and_keeps_the_npc_side(
    world: VoyageWorld,
) -> None:
    assert "You have never dealt with them." in world.scene(SMUGGLER, PLAYER_ID)
    _visit(world)
    world.run_action(lambda tx: tx.set_attitude(SMUGGLER, PLAYER_ID, 30))
    with _statements(world) as seen:
        scene = world.scene(SMUGGLER, PLAYER_ID)
    assert f"- day 1: {_VISIT}" in scene
    assert "Attitude to the player: 30 (friendly)." in scene
    assert any("FROM memories" in sql for sql in seen)
    # The NPC side (its wares among it) came from the cache, not from the database again.
    assert not any("FROM trade_lines" in sql for sql in seen), seen


@pytest.mark.parametrize("table", sorted(_CHANGES))
def test_a_commit_to_a_table_of_the_npc_side_is_seen_after_memory_commits(
    world: VoyageWorld, table: str
) -> None:
    npc_id, sql, params, shown = _CHANGES[table]
    before = world.scene(npc_id, PLAYER_ID)
    assert shown not in before
    _visit(world, npc_id)
    assert world.scene(npc_id, PLAYER_ID) != before  # the memory; the NPC side stays cached
    with world.transaction() as tx:
        tx._rows(sql, params)  # type: ignore[attr-defined]
    assert shown in world.scene(npc_id, PLAYER_ID)


def test_a_commit_of_a_memory_and_the_npc_side_together_is_seen(world: VoyageWorld) -> None:
    world.scene(SMUGGLER, PLAYER_ID)
    with world.transaction() as tx:
        tx.remember(SMUGGLER, PLAYER_ID, _VISIT, kind="visit")
        tx.set_price(OMEGA, "fuel", 777)
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert "fuel cells [fuel] 40 at 777" in scene
    assert _VISIT in scene


def test_every_table_the_npc_side_reads_is_named_in_its_cache_key(world: VoyageWorld) -> None:
    assert set(_CHANGES) == NPC_SIDE_TABLES
    for npc in world.npcs():
        with world.snapshot() as reader, _statements(world) as seen:
            gather_npc_side(reader, npc.id)
        read = {name.lower() for sql in seen for name in _FROM.findall(sql)}
        assert read, seen
        assert read <= NPC_SIDE_TABLES, read - NPC_SIDE_TABLES


_FROM = re.compile(r"\b(?:FROM|JOIN)\s+\"?(\w+)", re.IGNORECASE)


def test_a_statement_the_store_cannot_place_counts_as_writing_every_table() -> None:
    assert written_table("SELECT price FROM market WHERE good_id = ?") is None
    assert written_table("insert or replace into market (price) VALUES (1)") == "market"
    assert written_table('DELETE FROM "memories" WHERE id = 1') == "memories"
    assert written_table("PRAGMA user_version = 3") == ANY_TABLE
    assert written_table("WITH x AS (SELECT 1) UPDATE market SET price = 1") == ANY_TABLE


def test_every_scene_begins_with_the_npcs_scene_opening(placed_world: VoyageWorld) -> None:
    # What the prefix warmer evaluates before anyone talks: a greeting reuses it only if the
    # scene begins with it byte for byte, and it must hold nothing of one player.
    world = placed_world
    npcs = [npc.id for npc in world.npcs()]
    openings = {npc: world.scene_opening(npc) for npc in npcs}
    for npc in npcs:
        assert world.scene(npc, PLAYER_ID).startswith(openings[npc] + "\n")
        assert "The player" not in openings[npc] and "Memories" not in openings[npc]
    world.run_action(lambda tx: tx.add_credits(PLAYER_ID, 5_000))
    world.run_action(lambda tx: tx.remember(SMUGGLER, PLAYER_ID, "They asked about spice."))
    world.run_action(lambda tx: tx.set_attitude(SMUGGLER, PLAYER_ID, 70))
    for npc in npcs:
        assert world.scene_opening(npc) == openings[npc]  # the player's changes stay theirs
        assert world.scene(npc, PLAYER_ID).startswith(openings[npc] + "\n")
    with world.transaction() as tx:
        tx.set_price(OMEGA, "fuel", 777)
    opening = world.scene_opening(SMUGGLER)
    assert opening != openings[SMUGGLER] and "fuel cells [fuel] 40 at 777" in opening
    assert world.scene(SMUGGLER, PLAYER_ID).startswith(opening + "\n")

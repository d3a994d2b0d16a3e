"""The scene's NPC side is read once per world state: every commit, by anyone, is seen next."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.content import OMEGA, PLAYER_ID, SMUGGLER


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

"""VoyageWorld.reading(): a meeting's reads share one snapshot, nest, and never write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from starharness.npc import ReadsTogether, reading_together
from starharness.voyage import VoyageWorld
from starharness.voyage.content import OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.store import TransactionStateError


def test_the_world_reads_together(placed_world: VoyageWorld) -> None:
    assert isinstance(placed_world, ReadsTogether)
    with reading_together(placed_world):
        npc = placed_world.npc(SMUGGLER)
        assert npc is not None and npc.name == "Jonah Karsk"
        assert placed_world.has_player(PLAYER_ID)
        assert placed_world.can_meet(SMUGGLER, PLAYER_ID)
        assert placed_world.attitude(SMUGGLER, PLAYER_ID) == 0
        scene = placed_world.scene(SMUGGLER, PLAYER_ID)
    assert scene == placed_world.scene(SMUGGLER, PLAYER_ID)


def test_inside_reading_every_read_sees_one_state(world: VoyageWorld, world_path: Path) -> None:
    with world.reading():
        assert "fuel cells [fuel] 40 at 450" in world.scene(SMUGGLER, PLAYER_ID)
        conn = sqlite3.connect(world_path, isolation_level=None)
        try:  # another process commits while the meeting reads
            conn.execute("UPDATE actors SET credits = 123 WHERE id = ?", (SMUGGLER,))
            conn.execute("UPDATE market SET price = 777 WHERE good_id = 'fuel'")
        finally:
            conn.close()
        with world.snapshot() as reader:
            assert reader.credits(SMUGGLER) == 48_000
        assert "Jonah Karsk: 48,000 credits." in world.scene(SMUGGLER, PLAYER_ID)
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert "Jonah Karsk: 123 credits." in scene
    assert "fuel cells [fuel] 40 at 777" in scene


def test_reading_nests_and_the_outer_one_reads_on(placed_world: VoyageWorld) -> None:
    with placed_world.reading() as outer:
        with placed_world.reading() as inner, placed_world.snapshot() as innermost:
            assert inner is outer and innermost is outer
            assert placed_world.has_player(PLAYER_ID)
        assert placed_world.npc(SMUGGLER) is not None  # the inner exits did not end it
        assert outer.day() == 1


def test_writing_inside_reading_raises_and_works_after(placed_world: VoyageWorld) -> None:
    with placed_world.reading():
        with pytest.raises(TransactionStateError):
            placed_world.run_action(lambda tx: tx.set_price(OMEGA, "fuel", 777))
        with pytest.raises(TransactionStateError), placed_world.transaction():
            pass
    placed_world.run_action(lambda tx: tx.set_price(OMEGA, "fuel", 777))
    assert "fuel cells [fuel] 40 at 777" in placed_world.scene(SMUGGLER, PLAYER_ID)

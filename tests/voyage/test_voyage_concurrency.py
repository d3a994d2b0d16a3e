"""Two VoyageWorld instances on one world, in two threads, cannot both take the last units.

The races run on SQLite and on PostgreSQL; the busy timeout is SQLite's own.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.content import OMEGA, OMEGA_STATION, PLAYER_ID, SMUGGLER, ActorSeed
from starharness.voyage.store import WorldBusyError, WorldTx
from world_support import WorldPlace

PLAYER_2 = "player-2"
LAST_UNITS = 6  # the smuggler starts with 6 spice


_SECOND = ActorSeed(PLAYER_2, "Captain Birch", "player", "captain", OMEGA, 50_000)
_SEED = dataclasses.replace(OMEGA_STATION, actors=(*OMEGA_STATION.actors, _SECOND))


@pytest.fixture
def two_player_path(tmp_path: Path) -> Path:
    path = tmp_path / "world.db"
    open_world(path, seed=_SEED).close()
    return path


@pytest.fixture
def two_players(world_place: WorldPlace) -> WorldPlace:
    world_place.open(seed=_SEED).close()
    return world_place


def _buy_last_spice(world: VoyageWorld, player: str) -> bool:
    """Check and take inside one transaction, as a guarded action does."""

    def buy(tx: WorldTx) -> bool:
        if tx.cargo_qty(SMUGGLER, "spice") < LAST_UNITS:
            return False
        tx.move_cargo(SMUGGLER, player, "spice", LAST_UNITS)
        tx.transfer_credits(player, SMUGGLER, LAST_UNITS * 1_000)
        return True

    return world.run_action(buy)


def _spice(world: VoyageWorld) -> tuple[int, int, int]:
    with world.snapshot() as r:
        return (
            r.cargo_qty(SMUGGLER, "spice"),
            r.cargo_qty(PLAYER_ID, "spice"),
            r.cargo_qty(PLAYER_2, "spice"),
        )


def test_a_buyer_that_arrives_mid_transaction_sees_the_result(two_players: WorldPlace) -> None:
    """Player 1 has read the stock and not yet written when player 2 starts: 2 must wait
    (PostgreSQL: or conflict and run again), then sees the stock gone."""
    first, second = two_players.open(), two_players.open()
    inside = threading.Event()
    other_started = threading.Event()
    results: dict[str, bool] = {}

    def slow_buyer() -> None:
        with first.transaction() as tx:
            have = tx.cargo_qty(SMUGGLER, "spice")
            inside.set()
            assert other_started.wait(10)
            if have >= LAST_UNITS:
                tx.move_cargo(SMUGGLER, PLAYER_ID, "spice", LAST_UNITS)
                results[PLAYER_ID] = True

    def fast_buyer() -> None:
        assert inside.wait(10)
        other_started.set()
        results[PLAYER_2] = _buy_last_spice(second, PLAYER_2)

    threads = [threading.Thread(target=slow_buyer), threading.Thread(target=fast_buyer)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert results == {PLAYER_ID: True, PLAYER_2: False}
        assert _spice(first) == (0, LAST_UNITS, 0)
    finally:
        first.close()
        second.close()


def _race(
    barrier: threading.Barrier, world: VoyageWorld, player: str, results: dict[str, bool]
) -> None:
    barrier.wait(10)
    results[player] = _buy_last_spice(world, player)


def test_two_buyers_racing_for_the_last_units_never_oversell(two_players: WorldPlace) -> None:
    worlds = {PLAYER_ID: two_players.open(), PLAYER_2: two_players.open()}
    try:
        for _ in range(15):
            barrier = threading.Barrier(2)
            results: dict[str, bool] = {}

            threads = [
                threading.Thread(target=_race, args=(barrier, worlds[p], p, results))
                for p in worlds
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            assert sorted(results.values()) == [False, True]
            smuggler, one, two = _spice(worlds[PLAYER_ID])
            assert smuggler == 0 and one + two == LAST_UNITS
            winner = next(player for player, won in results.items() if won)
            with worlds[PLAYER_ID].transaction() as tx:  # hand the spice back for the next round
                tx.move_cargo(winner, SMUGGLER, "spice", LAST_UNITS)
                tx.transfer_credits(SMUGGLER, winner, LAST_UNITS * 1_000)
    finally:
        for world in worlds.values():
            world.close()


def test_one_world_shared_by_threads_takes_turns(two_players: WorldPlace) -> None:
    with two_players.open() as world:

        def pay(times: int) -> None:
            for _ in range(times):
                world.run_action(lambda tx: tx.transfer_credits(PLAYER_2, PLAYER_ID, 1))

        threads = [threading.Thread(target=pay, args=(200,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        with world.snapshot() as r:
            assert r.credits(PLAYER_ID) == 12_000 + 800
            assert r.credits(PLAYER_2) == 50_000 - 800


def test_a_writer_kept_waiting_too_long_gets_a_clear_error(two_player_path: Path) -> None:
    holder = open_world(two_player_path)
    impatient = open_world(two_player_path, busy_timeout_s=0.05)
    try:
        with holder.transaction() as tx:
            tx.add_credits(PLAYER_ID, 1)
            with (
                pytest.raises(WorldBusyError, match="stayed locked past the busy timeout"),
                impatient.transaction(),
            ):
                pass
        with impatient.transaction() as tx:  # usable again once the holder commits
            assert tx.credits(PLAYER_ID) == 12_001
    finally:
        holder.close()
        impatient.close()

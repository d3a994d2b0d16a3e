"""A process killed mid-trade leaves the world exactly as the last commit left it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from starharness.voyage.content import OMEGA, PLAYER_ID, SMUGGLER
from world_support import CHILD_OPEN, WorldPlace

_TRADER = (
    CHILD_OPEN
    + """
import sys

world = open_from_argv(sys.argv[1:4])
with world.transaction() as tx:  # a whole trade that commits
    tx.transfer_credits("player-1", "npc-karsk", 2_250)
    tx.move_cargo("npc-karsk", "player-1", "fuel", 5)
with world.transaction() as tx:  # a second trade, killed after its first write
    tx.transfer_credits("player-1", "npc-karsk", 9_000)
    print("first write done", flush=True)
    sys.stdin.readline()
    tx.move_cargo("npc-karsk", "player-1", "fuel", 20)
"""
)


def test_sigkill_in_the_middle_of_a_trade_loses_only_that_trade(world_place: WorldPlace) -> None:
    world_place.open().close()
    child = subprocess.Popen(
        [sys.executable, "-c", _TRADER, *world_place.locator()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "first write done"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    with world_place.open() as world:
        with world.snapshot() as r:
            assert r.credits(PLAYER_ID) == 12_000 - 2_250
            assert r.credits(SMUGGLER) == 48_000 + 2_250
            assert r.cargo(PLAYER_ID) == {"fuel": 5}
            assert r.cargo_qty(SMUGGLER, "fuel") == 35
        with world.transaction() as tx:  # the killed writer left no lock behind
            tx.adjust_stock(OMEGA, "fuel", -1)

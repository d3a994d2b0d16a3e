"""Many buyers in several processes on one PostgreSQL world, through the real action factory.

Each process runs concurrent `player_buys` for the last units of the smuggler's fuel (or with
the player's last credits): SERIALIZABLE transactions with bounded retry must never oversell,
must conserve credits, and every attempt must end committed, refused or busy, with one audit
row each that matches the state.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage.content import OMEGA_STATION, PLAYER_ID, SMUGGLER, CargoSeed, WorldSeed
from world_support import CHILD_OPEN, WorldPlace

PROCESSES = 3
BUYERS = 12  # concurrent actions per process
UNIT_PRICE = 450

_BUYERS = (
    CHILD_OPEN
    + """
import asyncio, json, sys
sys.path.insert(0, sys.argv[4])
from voyage_action_support import Bench
from starharness.runtime.tools import ToolSuccess
from starharness.voyage.store.errors import WorldBusyError

UNIT_PRICE, BUYERS = int(sys.argv[5]), int(sys.argv[6])

async def main():
    world = open_from_argv(sys.argv[1:4])
    bench = Bench(world)
    print("ready", flush=True)
    sys.stdin.readline()  # every process starts buying at once
    order = json.dumps({"good_id": "fuel", "qty": 1, "unit_price": UNIT_PRICE})

    async def buy():
        # The model's call makes an offer; the player's acceptance commits it, all at once.
        outcome = await bench.call_raw("player_buys", order)
        if isinstance(outcome.result, ToolSuccess):
            value = outcome.result.value
            if "offered" not in value:
                return "committed" if value["ok"] else "refused"
            try:
                attempt = await bench.settle(value["offered"])
            except WorldBusyError:
                return "busy"
            return "committed" if attempt.ok else "refused"
        return "busy" if "busy" in outcome.content else outcome.content

    outcomes = await asyncio.gather(*(buy() for _ in range(BUYERS)))
    counts = {"committed": 0, "refused": 0, "busy": 0, "other": []}
    for outcome in outcomes:
        if outcome in ("committed", "refused", "busy"):
            counts[outcome] += 1
        else:
            counts["other"].append(outcome)
    world.close()
    print(json.dumps(counts), flush=True)

asyncio.run(main())
"""
)


def _seed(fuel: int, player_credits: int) -> WorldSeed:
    actors = tuple(
        dataclasses.replace(a, credits=player_credits) if a.id == PLAYER_ID else a
        for a in OMEGA_STATION.actors
    )
    cargo = tuple(c for c in OMEGA_STATION.cargo if (c.actor_id, c.good_id) != (SMUGGLER, "fuel"))
    return dataclasses.replace(
        OMEGA_STATION, actors=actors, cargo=(*cargo, CargoSeed(SMUGGLER, "fuel", fuel))
    )


@pytest.mark.parametrize(
    ("fuel", "player_credits"),
    [(7, 1_000_000), (1_000, 9 * UNIT_PRICE + 100)],
    ids=["last-units", "last-credits"],
)
def test_concurrent_buyers_in_several_processes_never_oversell(
    pg_target: PostgresTarget, fuel: int, player_credits: int
) -> None:
    place = WorldPlace("postgresql", target=pg_target)
    with place.open(seed=_seed(fuel, player_credits)) as world, world.snapshot() as r:
        before = {a: r.credits(a) for a in (PLAYER_ID, SMUGGLER)}
    support = str(Path(__file__).parent)
    children = [
        subprocess.Popen(
            [
                *(sys.executable, "-c", _BUYERS, *place.locator()),
                *(support, str(UNIT_PRICE), str(BUYERS)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        reports = [json.loads(child.communicate(timeout=300)[0]) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(30)
    assert all(child.returncode == 0 for child in children)
    committed = sum(r["committed"] for r in reports)
    refused = sum(r["refused"] for r in reports)
    busy = sum(r["busy"] for r in reports)
    assert [r["other"] for r in reports] == [[]] * PROCESSES
    assert committed + refused + busy == PROCESSES * BUYERS
    most = min(fuel, player_credits // UNIT_PRICE)
    # Contention may leave units unsold (busy attempts) but never sells one twice.
    assert 1 <= committed <= most
    assert refused >= 1  # more buyers than units: the guards refused the rest
    with place.open() as world, world.snapshot() as r:
        assert r.cargo_qty(SMUGGLER, "fuel") == fuel - committed
        assert r.cargo_qty(PLAYER_ID, "fuel") == committed
        assert r.credits(PLAYER_ID) == before[PLAYER_ID] - committed * UNIT_PRICE
        assert r.credits(SMUGGLER) == before[SMUGGLER] + committed * UNIT_PRICE
        assert sum(r.credits(a) for a in before) == sum(before.values())
        audit = [e for e in r.audit_log(limit=10_000) if e.action == "player_buys"]
    assert sum(e.ok for e in audit) == committed
    # Refusals are audited in the action's transaction; busy attempts in one of their own.
    assert sum(not e.ok for e in audit) == refused + busy
    assert sum(1 for e in audit if (e.reason or "").startswith("error:")) == busy

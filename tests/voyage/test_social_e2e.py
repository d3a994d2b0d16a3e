"""Witnesses, gossip and memory budgets through the real server: the offline brain behind the
mock LLM over HTTP, the runtime, the NPC server and a WebSocket player, on SQLite (and on
PostgreSQL under .ci/postgres).

A deal with Karsk at the bar is remembered by Brandt, who stood there, and reaches the model in
her scene; Vex at Kessler's Hollow knows nothing until the clock advances and word travels,
attributed, recorded in the audit, the same under the same seed. After 1,000 events an NPC's
memories of the player still fit the game's token budget and state every credit the audit
holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from voyage_action_support import Bench
from voyage_e2e_support import Player, actions, line, offers, serving_voyage

from starharness.mockllm import RecordedRequest
from starharness.npc.social import estimate_tokens
from starharness.voyage import VoyageWorld, seed_server_world
from starharness.voyage.content import (
    BROKER,
    DOCK_MASTER,
    OMEGA,
    PLAYER_ID,
    QUARTERMASTER,
    SMUGGLER,
)
from starharness.voyage.content.social import GOSSIP_ACTION, MEMORY_TOKENS
from starharness.voyage.memory_hooks import record_visit
from starharness.voyage.store import Memory
from starharness.voyage.store.scene import MEMORIES
from world_support import WorldPlace

SEEN = "Saw them buy 5 fuel cells from Jonah Karsk for 2,250."


def _memories(world: VoyageWorld, npc_id: str) -> list[Memory]:
    with world.snapshot() as reader:
        return reader.memories(npc_id, PLAYER_ID)


def _sent(requests: Sequence[RecordedRequest]) -> str:
    return json.dumps([request.body for request in requests])


async def _buy_fuel_from_karsk(me: Player) -> None:
    await me.hello()
    greeting = await me.open("e1", SMUGGLER)
    first = offers(greeting)[0]
    assert first["label"] == "Buy 5 fuel cells at 450"
    bought = await me.pick("e1", first["id"])
    assert actions(bought) == [("player_buys", True)]
    await me.close("e1")


async def test_a_deal_at_the_bar_is_witnessed_by_brandt_and_unknown_to_vex(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_voyage(tmp_path, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await _buy_fuel_from_karsk(me)
        seen = _memories(stack.world, DOCK_MASTER)
        assert [(m.kind, m.text, m.source_id, m.hops) for m in seen] == [
            ("witnessed", SEEN, SMUGGLER, 0)
        ]
        (karsk_deal,) = [m for m in _memories(stack.world, SMUGGLER) if m.kind == "trade"]
        assert seen[0].origin_id == karsk_deal.id and seen[0].importance < karsk_deal.importance
        # Vex at Kessler's Hollow and Okoro at Ceres were not there.
        assert _memories(stack.world, BROKER) == [] and _memories(stack.world, QUARTERMASTER) == []
        assert SEEN not in stack.world.scene(BROKER, PLAYER_ID)

        # Later, Brandt's scene (what her model reads) holds what she saw, and she says so.
        before = len(stack.mock.requests)
        greeted = await me.open("e2", DOCK_MASTER)
        assert SEEN in _sent(stack.mock.requests[before:])
        said = line(greeted)
        assert "I saw you buy 5 fuel cells from Jonah Karsk for 2,250." in said, said
        assert "Back again" not in said  # she saw the player; they never dealt with her


async def test_vex_has_heard_of_it_when_the_player_arrives_at_kesslers_hollow(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_voyage(tmp_path, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await _buy_fuel_from_karsk(me)
        await me.open("ilse", DOCK_MASTER)
        asked = await me.say("ilse", "I need passage")
        passage = [i["id"] for i in offers(asked) if i["label"].startswith("Passage to Kessler")]
        assert passage, offers(asked)
        left = await me.pick("ilse", passage[0])
        assert ("book_passage", True) in actions(left)

        # Two days on the route: word of the deal travelled with the crews.
        greeted = await me.open("vex", BROKER)
        said = line(greeted)
        told = re.search(r"(Jonah Karsk|Ilse Brandt) tells me: (.*?fuel cells.*?\.)", said)
        assert told is not None and "Back again" not in said, said


async def test_gossip_after_a_tick_reaches_kessler_attributed_audited_and_seeded(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    runs: list[list[tuple[object, ...]]] = []
    for run in ("a", "b"):
        folder = tmp_path / run
        folder.mkdir()
        place = world_place
        if world_place.target is None:
            place = WorldPlace("sqlite", path=folder / "world.db")
        elif run == "b":
            seed_server_world(world_place.target)  # the same fresh world again
        async with (
            serving_voyage(folder, place=place) as stack,
            Player(stack.running.ws_url, PLAYER_ID) as me,
        ):
            await _buy_fuel_from_karsk(me)
            assert not any(m.kind == "gossip" for m in _memories(stack.world, BROKER))
            await stack.running.server.tick(3)

            heard = [m for m in _memories(stack.world, BROKER) if m.kind == "gossip"]
            assert heard, _memories(stack.world, BROKER)
            # Attributed to whoever told Vex, and worth less than the deal itself.
            tellers = {SMUGGLER: "Jonah Karsk says: ", DOCK_MASTER: "Ilse Brandt says: "}
            for memory in heard:
                assert memory.source_id in tellers
                assert memory.text.startswith(tellers[memory.source_id]), memory.text
                assert "fuel cells" in memory.text and memory.hops >= 1
                assert memory.importance < 60 * 0.8
            assert any(
                "says: " in line for line in stack.world.scene(BROKER, PLAYER_ID).split("\n")
            )

            with stack.world.snapshot() as reader:
                passes = [e for e in reader.audit_log(1_000) if e.action == GOSSIP_ACTION]
            told_vex = [e for e in passes if e.target_id == BROKER]
            assert told_vex and all(e.ok for e in passes)
            assert {e.summary for e in told_vex} == {m.text for m in heard}
            runs.append(
                sorted(
                    (e.day, e.actor_id, e.target_id, e.summary, json.dumps(e.arguments))
                    for e in passes
                )
            )
    # The same world, the same deal, the same days, the same seed: the same words spread.
    assert runs[0] == runs[1]


_BOUGHT = re.compile(r"they bought ([\d,]+) units for ([\d,]+) \((\d+) deals\)")
_SOLD = re.compile(r"they sold ([\d,]+) units for ([\d,]+) \((\d+) deals\)")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


async def test_after_1000_events_memories_fit_the_budget_and_keep_every_credit(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with serving_voyage(tmp_path, place=world_place) as stack:
        world = stack.world
        bench = Bench(world)
        with world.snapshot() as reader:
            prices = {good: reader.price(OMEGA, good) for good in ("medgel", "spice")}
            karsk = reader.require_actor(SMUGGLER)
        card = world.npc(SMUGGLER)
        with world.transaction() as tx:
            tx.add_credits(PLAYER_ID, 5_000_000)  # 800 deals at a loss each round
        assert card is not None and karsk.alive
        # 400 rounds of buying and selling back (800 deals), 190 idle visits among them and
        # ten more at the end: 1,000 events.
        for round_ in range(400):
            good, qty = ("medgel", "spice")[round_ % 2], 1 + round_ % 3
            price = prices[good]
            assert price is not None
            # Karsk buys back at 80% of the going price (his band is 75-85%).
            for action, unit in (("player_buys", price), ("player_sells", price * 8 // 10)):
                done = await bench.call(action, good_id=good, qty=qty, unit_price=unit)
                assert done["ok"], done
            if round_ % 2 == 1 and round_ < 380:
                record_visit(world, card, PLAYER_ID, [])
        for _ in range(10):
            record_visit(world, card, PLAYER_ID, [])

        async with Player(stack.running.ws_url, PLAYER_ID) as me:
            await me.hello()
            before = len(stack.mock.requests)
            await me.open("e1", SMUGGLER)
            sent = [r.body for r in stack.mock.requests[before:]]
        scenes = [
            str(m["content"])
            for body in sent
            for m in body["messages"]
            if MEMORIES in str(m.get("content", ""))
        ]
        assert scenes, "the scene never reached the model"
        block = scenes[-1][scenes[-1].index(MEMORIES) + len(MEMORIES) :]
        assert estimate_tokens(block) <= MEMORY_TOKENS, block

        with world.snapshot() as reader:
            audit = [e for e in reader.audit_log(10_000) if e.ok and e.actor_id == SMUGGLER]
        totals = {}
        for name in ("player_buys", "player_sells"):
            deals = [e.arguments for e in audit if e.action == name]
            qty = sum(int(str(a["qty"])) for a in deals)
            paid = sum(int(str(a["qty"])) * int(str(a["unit_price"])) for a in deals)
            totals[name] = (qty, paid, len(deals))
        assert totals["player_buys"][2] == 400 and totals["player_sells"][2] == 400
        bought, sold = _BOUGHT.search(block), _SOLD.search(block)
        assert bought and sold, block
        assert tuple(_number(g) for g in bought.groups()) == totals["player_buys"], block
        assert tuple(_number(g) for g in sold.groups()) == totals["player_sells"], block
        # Ten idle visits came last; the newest deal is still quoted, not crowded out.
        quoted = [line for line in block.split("\n") if line.startswith("- day")]
        assert any("They " in line and " for " in line for line in quoted), block

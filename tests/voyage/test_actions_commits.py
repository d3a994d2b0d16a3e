"""Committed actions: trades move credits and both holds at once, write memories and audit rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from voyage_action_support import Bench, jam_player_hold, ledger

from starharness.runtime.tools import FailureCode, ToolFailure
from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.actions import ACTIONS, MAX_ATTITUDE_STEP, TRUST_FOR_A_JOB_DONE
from starharness.voyage.content import CERES, DOCK_MASTER, OMEGA, PLAYER_ID, SMUGGLER


@pytest.fixture
def world(placed_world: VoyageWorld) -> VoyageWorld:
    """Every test here runs on SQLite and on PostgreSQL."""
    return placed_world


async def test_a_sale_moves_credits_and_both_holds_and_is_remembered(world: VoyageWorld) -> None:
    before = ledger(world)
    result = await Bench(world).call("player_buys", good_id="fuel", qty=5, unit_price=430)
    assert result["ok"] is True
    assert result["summary"] == "Bought 5 fuel cells for 2,150 credits."  # the player's side
    assert result["their_credits"] == before.credits[PLAYER_ID] - 2_150
    after = ledger(world)
    assert after.credits == {
        SMUGGLER: before.credits[SMUGGLER] + 2_150,
        PLAYER_ID: before.credits[PLAYER_ID] - 2_150,
    }
    assert after.cargo[SMUGGLER]["fuel"] == before.cargo[SMUGGLER]["fuel"] - 5
    assert after.cargo[PLAYER_ID] == {"fuel": 5}
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert (memory.kind, memory.action, memory.good_id, memory.qty, memory.price) == (
        "trade",
        "bought",
        "fuel",
        5,
        2_150,
    )


async def test_buying_from_the_player_pays_them(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "parts", 4)
    result = await Bench(world).call("player_sells", good_id="parts", qty=3, unit_price=1_250)
    assert result["ok"] is True
    after = ledger(world)
    assert after.credits[PLAYER_ID] == 12_000 + 3_750
    assert after.cargo[PLAYER_ID] == {"parts": 1}
    assert after.cargo[SMUGGLER]["parts"] == 3
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert (memory.kind, memory.action, memory.qty, memory.price) == ("trade", "sold", 3, 3_750)


async def test_a_fault_in_mid_trade_rolls_back_every_write(world_path: Path) -> None:
    with open_world(world_path):
        pass
    jam_player_hold(world_path)
    with open_world(world_path) as world:
        before = ledger(world)
        bench = Bench(world, accept=False)
        offered = await bench.call("player_buys", good_id="fuel", qty=5, unit_price=450)
        # The fault strikes when the player's pick commits the offer: the settle raises.
        with pytest.raises(sqlite3.IntegrityError, match="hold jammed"):
            await bench.settle(offered["offered"])
        assert ledger(world) == before
        with world.snapshot() as reader:
            row = reader.audit_log(1)[0]
        assert (row.action, row.ok) == ("player_buys", False)
        assert row.reason is not None and "hold jammed" in row.reason
        assert [r for r in bench.reports if r.ok] == []


async def test_accepted_and_refused_attempts_are_audited(world: VoyageWorld) -> None:
    bench = Bench(world)
    await bench.call("player_buys", good_id="fuel", qty=2, unit_price=450)
    await bench.call("player_buys", good_id="fuel", qty=2, unit_price=10)
    with world.snapshot() as reader:
        refused, accepted = reader.audit_log(2)
    assert (accepted.action, accepted.ok, accepted.reason) == ("player_buys", True, None)
    assert accepted.summary == "Bought 2 fuel cells for 900 credits."
    assert accepted.arguments == {
        "good_id": "fuel",
        "qty": 2,
        "unit_price": 450,
        "npc_id": SMUGGLER,
        "player_id": PLAYER_ID,
        "accepted_offer": "offer-1",  # committed on the player's pick of that offer
    }
    assert (refused.ok, refused.reason, refused.summary) == (False, "price_out_of_band", None)
    assert refused.arguments["unit_price"] == 10
    assert (refused.actor_id, refused.target_id) == (SMUGGLER, PLAYER_ID)
    assert [(r.name, r.ok) for r in bench.reports] == [
        ("player_buys", True),
        ("player_buys", False),
    ]


async def test_a_price_left_out_is_the_going_price_frozen_in_the_offer(
    world: VoyageWorld,
) -> None:
    # A small model need not name a price, so it cannot name a wrong one: a sale is at the
    # going price (medical gel 1,100 on Omega), a purchase at the most the NPC pays (85%).
    bench = Bench(world, accept=False)
    sold = await bench.call("player_buys", good_id="medgel", qty=2)
    assert sold["ok"] is True, sold
    assert "Buy 2 medical gel at 1,100" in str(sold["offer"]), sold
    await bench.settle(sold["offered"])
    bought = await bench.call("player_sells", good_id="medgel", qty=1)
    assert bought["ok"] is True, bought
    assert "Sell 1 medical gel for 935 cr" in str(bought["offer"]), bought
    await bench.settle(bought["offered"])
    with world.snapshot() as reader:
        rows = reader.audit_log(2)
    committed = sorted((r.action, r.arguments["unit_price"]) for r in rows if r.ok)
    assert committed == [("player_buys", 1_100), ("player_sells", 935)]
    assert ledger(world).credits[PLAYER_ID] == 12_000 - 2_200 + 935


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"good_id": "fuel", "qty": "lots", "unit_price": 450}, "qty"),
        ({"good_id": "fuel", "qty": 0, "unit_price": 450}, "qty"),
        ({"good_id": "fuel", "qty": 1, "unit_price": -450}, "unit_price"),
        ({"good_id": "", "qty": 1, "unit_price": 450}, "good_id"),
    ],
)
async def test_bad_arguments_are_refused_by_the_schema_naming_the_field(
    world: VoyageWorld, arguments: dict[str, object], field: str
) -> None:
    before = ledger(world)
    outcome = await Bench(world).call_raw("player_buys", json.dumps(arguments))
    assert isinstance(outcome.result, ToolFailure)
    assert outcome.result.code == FailureCode.INVALID_ARGS
    assert f"'{field}'" in outcome.content
    assert ledger(world) == before


async def test_the_model_cannot_choose_whose_wallet_it_touches(world: VoyageWorld) -> None:
    for action in ACTIONS:
        properties = getattr(action, "tool", action).schema.parameters.get("properties", {})
        assert "npc_id" not in properties and "player_id" not in properties
    bench = Bench(world)
    await bench.call(
        "player_buys",
        good_id="fuel",
        qty=1,
        unit_price=450,
        player_id=DOCK_MASTER,
        npc_id=PLAYER_ID,
    )
    after = ledger(world)
    assert after.credits[PLAYER_ID] == 12_000 - 450
    assert after.cargo[PLAYER_ID] == {"fuel": 1}


async def test_attitude_changes_are_bounded_and_remembered_with_the_reason(
    world: VoyageWorld,
) -> None:
    bench = Bench(world)
    result = await bench.call("change_attitude", delta=-MAX_ATTITUDE_STEP, reason="a lowball")
    assert (result["ok"], result["attitude"], result["before"]) == (True, -10, 0)
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert (memory.kind, memory.text) == ("attitude", "Cooled on them (-10): a lowball")


async def test_notes_are_memories(world: VoyageWorld) -> None:
    result = await Bench(world).call("note_memory", text="Asked about my old crew.")
    assert result["ok"] is True
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert (memory.kind, memory.text) == ("note", "Asked about my old crew.")


async def test_intel_is_told_once_trusted_enough(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.set_attitude(SMUGGLER, PLAYER_ID, 20)
    result = await Bench(world).call("sell_intel", intel_id="intel-patrols")
    assert result["ok"] is True
    assert "even days" in str(result["text"])
    assert ledger(world).credits[PLAYER_ID] == 12_000 - 1_500
    with world.snapshot() as reader:
        assert reader.count_memories(SMUGGLER, PLAYER_ID, kind="intel", ref="intel-patrols") == 1


async def test_a_job_completes_once_its_goods_are_in_the_hold(world: VoyageWorld) -> None:
    bench = Bench(world)
    offered = await bench.call("offer_quest", quest_id="quest-medgel")
    assert (offered["ok"], offered["reward"], offered["qty"]) == (True, 14_000, 10)
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "medgel", 12)
    done = await bench.call("complete_quest", quest_id="quest-medgel")
    assert done["ok"] is True
    after = ledger(world)
    assert after.credits[PLAYER_ID] == 12_000 + 14_000
    assert after.cargo[PLAYER_ID] == {"medgel": 2}
    assert after.attitude == TRUST_FOR_A_JOB_DONE
    with world.snapshot() as reader:
        quest = reader.quest("quest-medgel")
    assert quest is not None and quest.status == "completed"


async def test_passage_moves_the_player(world: VoyageWorld) -> None:
    bench = Bench(world, npc_id=DOCK_MASTER)
    result = await bench.call("book_passage", destination=CERES)
    assert (result["ok"], result["fare"], result["destination"]) == (True, 1_800, "Ceres Deep")
    assert world.player_view(PLAYER_ID)["location"]["id"] == CERES
    assert not world.can_meet(DOCK_MASTER, PLAYER_ID)
    assert world.can_meet("npc-okoro", PLAYER_ID)
    again = await bench.call("book_passage", destination=OMEGA)
    assert again["reason"] == "not_here"

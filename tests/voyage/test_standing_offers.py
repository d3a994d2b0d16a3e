"""A game's standing deals (`Game.standing_offers`): Omega's job hand-in is on the table
whenever the player holds the goods, whatever the model thinks of; played through the real
NPC server, a WebSocket client and the mock LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from voyage_e2e_support import PLANS, Player, actions, offers, serving_voyage

from starharness.mockllm.capabilities import MockCapabilities
from starharness.npc.actions import OfferDraft, OfferTerms
from starharness.npc.encounter.offer_desk import OfferDesk
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store import WorldTx

QUEST = "quest-medgel"  # 10 medical gel for Karsk, 14,000 credits


def _job_and_gel(qty: int) -> Any:
    def work(tx: WorldTx) -> None:
        tx.accept_quest(QUEST, PLAYER_ID)
        tx.move_cargo(SMUGGLER, PLAYER_ID, "medgel", qty)

    return work


def _hand_ins(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in offers(frames) if o["offer"]["action"] == "complete_quest"]


async def test_the_hand_in_is_offered_while_the_player_holds_the_goods(tmp_path: Path) -> None:
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        stack.world.run_action(_job_and_gel(10))
        with stack.world.snapshot() as reader:
            before = reader.credits(PLAYER_ID)
        await me.hello()
        greeted = await me.open("e1", SMUGGLER)
        [hand_in] = _hand_ins(greeted)
        # Nothing was decided or done to offer it: walking up commits nothing.
        assert actions(greeted) == []
        assert hand_in["label"].startswith("Hand over 10 medical gel")
        took = await me.pick("e1", hand_in["id"])
        again = await me.say("e1", "Anything else?")
        # The same offer picked again is refused as settled; nothing changes.
        await me.send({"t": "encounter.say", "id": "e1", "optionId": hand_in["id"]})
        [stale] = await me.until(lambda f: f["t"] == "error")
        with stack.world.snapshot() as reader:
            after = reader.credits(PLAYER_ID)
            quest = reader.quest(QUEST)
            audit = [(row.action, row.ok) for row in reader.audit_log()]
    assert actions(took) == [("complete_quest", True)]
    assert after - before == 14_000
    assert quest is not None and quest.status == "completed"
    assert _hand_ins(took) == [] and _hand_ins(again) == []
    assert audit.count(("complete_quest", True)) == 1
    assert stale["code"] == "bad_option" and "no longer open" in stale["message"]


async def test_no_hand_in_while_short_and_no_refusal_written(tmp_path: Path) -> None:
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        stack.world.run_action(_job_and_gel(6))
        await me.hello()
        short = await me.open("e1", SMUGGLER)
        talked = await me.say("e1", "Quiet night?")
        with stack.world.snapshot() as reader:
            rows = [row.action for row in reader.audit_log()]
        # Four more reach the hold between turns: the next turn shows the hand-in.
        stack.world.run_action(lambda tx: tx.move_cargo(SMUGGLER, PLAYER_ID, "medgel", 4))
        ready = await me.say("e1", "Anything new?")
    assert _hand_ins(short) == [] and _hand_ins(talked) == []
    # Nobody asked for the hand-in, so nothing was refused: the audit has no row of it.
    assert "complete_quest" not in rows
    assert [o["label"][:26] for o in _hand_ins(ready)] == ["Hand over 10 medical gel f"]


@pytest.mark.parametrize(("plays", "provider"), PLANS)
async def test_a_job_taken_with_the_goods_aboard_can_be_handed_in_in_the_same_turn(
    tmp_path: Path, plays: MockCapabilities, provider: str
) -> None:
    async with (
        serving_voyage(tmp_path, plays=plays, provider=provider) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        stack.world.run_action(lambda tx: tx.move_cargo(SMUGGLER, PLAYER_ID, "medgel", 10))
        await me.hello()
        greeted = await me.open("e1", SMUGGLER)
        took_job = await me.say("e1", "I'll take the job.")
        with stack.world.snapshot() as reader:
            quest = reader.quest(QUEST)
    assert _hand_ins(greeted) == []
    assert actions(took_job) == [("offer_quest", True)]
    assert quest is not None and quest.status == "accepted"
    # The options of the turn that took the job already hold its hand-in, not the next turn's,
    # and before any offer the NPC made earlier.
    [hand_in] = _hand_ins(took_job)
    assert hand_in["label"].startswith("Hand over 10 medical gel")
    assert offers(took_job)[0]["id"] == hand_in["id"]


def _draft(action: str, qty: int) -> OfferDraft:
    def settle(offer_id: str) -> Any:
        raise AssertionError("not settled here")

    terms = OfferTerms(f"{action} {qty}")
    return OfferDraft(action, {"qty": qty}, terms, settle)


def test_standing_deals_keep_their_ids_beside_the_npcs_offers() -> None:
    desk = OfferDesk(3)
    desk.new_turn()
    npc = desk.propose(_draft("buy", 2))
    desk.stand([_draft("hand_in", 10)])
    [_, standing] = desk.pending
    desk.stand([_draft("hand_in", 10)])
    assert [o.id for o in desk.pending] == [npc.id, standing.id]
    # The NPC's first offer of a new turn withdraws its own older ones, never a standing one.
    desk.new_turn()
    newer = desk.propose(_draft("buy", 3))
    assert [o.id for o in desk.pending] == [standing.id, newer.id]
    assert desk.was_settled(npc.id)
    # The world no longer allows it: withdrawn, and its id is settled.
    desk.stand([])
    assert [o.id for o in desk.pending] == [newer.id]
    assert desk.was_settled(standing.id)


def test_the_npcs_offers_make_room_before_a_standing_deal() -> None:
    desk = OfferDesk(2)
    desk.stand([_draft("hand_in", 10)])
    [standing] = desk.pending
    desk.new_turn()
    for qty in (1, 2, 3):
        desk.propose(_draft("buy", qty))
    assert desk.pending[0].id == standing.id
    assert [o.draft.arguments["qty"] for o in desk.pending] == [10, 3]


async def test_a_hand_in_picked_after_the_goods_left_is_refused_and_nothing_moves(
    tmp_path: Path,
) -> None:
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        stack.world.run_action(_job_and_gel(10))
        await me.hello()
        [hand_in] = _hand_ins(await me.open("e1", SMUGGLER))
        # The gel leaves the hold between the offer and the pick.
        stack.world.run_action(lambda tx: tx.move_cargo(PLAYER_ID, SMUGGLER, "medgel", 3))
        with stack.world.snapshot() as reader:
            before = reader.credits(PLAYER_ID)
        picked = await me.pick("e1", hand_in["id"])
        with stack.world.snapshot() as reader:
            after = reader.credits(PLAYER_ID)
            quest = reader.quest(QUEST)
    assert actions(picked) == [("complete_quest", False)]
    assert after == before
    assert quest is not None and quest.status == "accepted"
    # Short of goods, the hand-in no longer stands.
    assert _hand_ins(picked) == []

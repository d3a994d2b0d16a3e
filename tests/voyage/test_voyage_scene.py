"""The scene shows the world as it is now, and memories fold into a fixed budget."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from voyage_action_support import Bench

from starharness.voyage import VoyageWorld
from starharness.voyage.content import BROKER, KESSLER, OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.store import Memory, MemoryBudget, attitude_word, estimate_tokens
from starharness.voyage.store.memory import summarise_memories

SCENE_TOKEN_GOAL = 500
GOODS = {"fuel": "fuel cells", "spice": "nebula spice", "medgel": "medical gel"}


def test_scene_shows_place_time_wares_player_and_attitude(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.set_price(OMEGA, "medgel", 1_234)
        tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", 7)
        tx.add_credits(PLAYER_ID, -321)
        tx.set_attitude(SMUGGLER, PLAYER_ID, -45)
        tx.set_day(9)
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert scene.startswith("Day 9. Omega station: The Rusty Nebula")
    assert "fuel cells [fuel] 33 at 450" in scene
    assert "medical gel [medgel] 12 at 1,234" in scene
    # The scene says what the NPC pays (what its trade guard allows), not "at going price".
    assert "Buys, paying 75-85% of the going price shown: " in scene
    assert "drive parts [parts] 1,500" in scene
    assert "Captain Ash, 11,679 credits; hold: 7 fuel cells" in scene
    assert "Attitude to the player: -45 (hostile)" in scene
    # The third person: the NPC is named, never addressed ("You (Jonah Karsk) have ...").
    assert "Jonah Karsk: " in scene and "You (" not in scene
    assert "[intel-patrols]" in scene and "[quest-medgel]" in scene
    assert "You have never dealt with them." in scene


async def test_intel_the_player_bought_is_no_longer_for_sale_to_them(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.set_attitude(SMUGGLER, PLAYER_ID, 20)
    assert "[intel-patrols]" in world.scene(SMUGGLER, PLAYER_ID)
    assert (await Bench(world).call("sell_intel", intel_id="intel-patrols"))["ok"] is True
    assert "[intel-patrols]" not in world.scene(SMUGGLER, PLAYER_ID)


def test_scene_shows_news_of_the_npcs_location_only(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.add_world_event(OMEGA, "A freighter docks with coffee.")
        tx.add_world_event(KESSLER, "Vex throws a party.")
    assert "A freighter docks with coffee." in world.scene(SMUGGLER, PLAYER_ID)
    assert "Vex throws a party." not in world.scene(SMUGGLER, PLAYER_ID)
    assert "Vex throws a party." in world.scene(BROKER, PLAYER_ID)


def test_scene_recalls_the_last_deal(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.remember(
            SMUGGLER,
            PLAYER_ID,
            "Sold them 5 fuel cells for 2,250.",
            kind="trade",
            action="bought",
            good_id="fuel",
            qty=5,
            price=2_250,
        )
    assert "- day 1: Sold them 5 fuel cells for 2,250." in world.scene(SMUGGLER, PLAYER_ID)


def _fill(world: VoyageWorld, count: int) -> list[Memory]:
    goods = ["fuel", "medgel", "spice"]
    with world.transaction() as tx:
        for i in range(count):
            if i % 5 == 4:
                tx.remember(SMUGGLER, PLAYER_ID, f"They told a long story, number {i}.")
            else:
                good, qty = goods[i % 3], 5 + i % 4
                action = "bought" if i % 2 == 0 else "sold"
                tx.remember(
                    SMUGGLER,
                    PLAYER_ID,
                    f"They {action} {qty} {good}.",
                    kind="trade",
                    action=action,
                    good_id=good,
                    qty=qty,
                    price=qty * 400,
                )
            if i % 40 == 39:
                tx.set_day(tx.day() + 1)
        return tx.memories(SMUGGLER, PLAYER_ID)


def test_500_memories_fold_into_budget_and_keep_the_first_deal(world: VoyageWorld) -> None:
    memories = _fill(world, 500)
    scene = world.scene(SMUGGLER, PLAYER_ID)
    print(
        f"\nsmuggler scene with 500 memories: {len(scene)} chars, ~{estimate_tokens(scene)} tokens"
    )
    assert estimate_tokens(scene) < SCENE_TOKEN_GOAL
    assert "500 memories since day 1." in scene
    first = next(m for m in memories if m.kind == "trade")
    assert (
        f"first deal day 1: they {first.action} {first.qty} {GOODS[first.good_id or '']}" in scene
    )
    assert f"- day {memories[-1].day}: {memories[-1].text}" in scene
    last_trade = next(m for m in reversed(memories) if m.kind == "trade")
    assert f"- day {last_trade.day}: {last_trade.text}" in scene


def test_the_last_deal_is_named_when_newer_memories_push_it_out(world: VoyageWorld) -> None:
    memories = _fill(world, 60)
    with world.transaction() as tx:
        for n in range(5):
            tx.remember(SMUGGLER, PLAYER_ID, f"Chatted about the weather, take {n}.")
    last_trade = next(m for m in reversed(memories) if m.kind == "trade")
    good = GOODS[last_trade.good_id or ""]
    expected = (
        f"Last deal: day {last_trade.day}, they {last_trade.action} {last_trade.qty} {good} "
        f"for {last_trade.price:,}."
    )
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert expected in scene
    assert "- day 2: Chatted about the weather, take 4." in scene


def test_folded_counts_account_for_every_memory(world: VoyageWorld) -> None:
    memories = _fill(world, 120)
    summary = summarise_memories(memories, GOODS, MemoryBudget(chars=2_000, verbatim=3))
    older = memories[:-3]
    # Old rows are folded (a row stands for `weight` memories); the counts still cover all 117.
    assert sum(m.weight for m in older) == 117
    deals = sum(m.weight for m in older if m.kind == "trade")
    notes = sum(m.weight for m in older) - deals
    assert f"{deals} deals" in summary and f"{notes} note memories" in summary
    spice = [m for m in older if m.kind == "trade" and m.good_id == "spice" and m.action == "sold"]
    total = sum(m.price or 0 for m in spice)
    assert f"they sold {sum(m.qty or 0 for m in spice):,} nebula spice for {total:,}" in summary


_memory = st.builds(
    lambda i, kind, day: Memory(
        id=i,
        npc_id=SMUGGLER,
        about_id=PLAYER_ID,
        day=day,
        kind=kind,
        text=f"memory {i} " * 9,
        action="bought" if kind == "trade" else None,
        good_id="fuel" if kind == "trade" else None,
        qty=3 if kind == "trade" else None,
        price=900 if kind == "trade" else None,
    ),
    st.integers(0, 10_000),
    st.sampled_from(["trade", "note", "intel"]),
    st.integers(1, 300),
)


@given(st.lists(_memory, min_size=1, max_size=80, unique_by=lambda m: m.id), st.integers(150, 900))
def test_summary_always_counts_everything(memories: list[Memory], chars: int) -> None:
    ordered = sorted(memories, key=lambda m: m.id)
    summary = summarise_memories(ordered, GOODS, MemoryBudget(chars=chars))
    assert summary.startswith(f"{len(ordered)} memories since day {ordered[0].day}.")
    trades = [m for m in ordered if m.kind == "trade"]
    if trades:
        first_quoted = f"day {trades[0].day}: memory {trades[0].id} " in summary
        assert first_quoted or f"first deal day {trades[0].day}" in summary


@pytest.mark.parametrize(
    ("score", "word"),
    [
        (-100, "hostile"),
        (-30, "hostile"),
        (-29, "unfriendly"),
        (-10, "unfriendly"),
        (-9, "neutral"),
        (19, "neutral"),
        (20, "friendly"),
        (59, "friendly"),
        (60, "trusted"),
        (100, "trusted"),
    ],
)
def test_attitude_words(score: int, word: str) -> None:
    assert attitude_word(score) == word

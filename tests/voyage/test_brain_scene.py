"""The brain reads the scene the store renders: every number it acts on matches the world."""

from __future__ import annotations

import dataclasses

from starharness.npc.encounter.scene_changes import GONE_PREFIX, scene_changes
from starharness.voyage import VoyageWorld
from starharness.voyage.brain import SceneView, parse_scene
from starharness.voyage.brain.scene import apply_changes
from starharness.voyage.content import BROKER, DOCK_MASTER, KESSLER, PLAYER_ID, SMUGGLER


def test_the_brain_reads_the_smugglers_scene_as_the_store_knows_it(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "parts", 3)
        tx.add_cargo(PLAYER_ID, "coffee", 1_200)
        tx.accept_quest("quest-medgel", PLAYER_ID)
    view = parse_scene(world.scene(SMUGGLER, PLAYER_ID))
    with world.snapshot() as reader:
        hold = reader.cargo(SMUGGLER)
        assert view.day == reader.day()
        assert view.npc_credits == reader.credits(SMUGGLER)
        assert view.player_credits == reader.credits(PLAYER_ID)
        prices = {q.good_id: q.price for q in reader.market(reader.location_of(SMUGGLER))}
        sold = [line.good_id for line in reader.trade_lines(SMUGGLER) if line.sells]
        bought = [line.good_id for line in reader.trade_lines(SMUGGLER) if line.buys]
    assert view.npc_name == "Jonah Karsk"
    assert view.place == "Omega station"
    assert [w.good_id for w in view.sells] == sold
    assert [w.good_id for w in view.buys] == bought
    assert {w.good_id: (w.price, w.units) for w in view.sells} == {
        good: (prices[good], hold[good]) for good in sold
    }
    assert view.held("parts") == 3
    assert view.held("coffee") == 1_200
    assert view.held("fuel") == 0
    assert [job.id for job in view.their_jobs] == ["quest-medgel"]
    assert view.open_jobs == []
    assert [(i.id, i.price, i.min_attitude) for i in view.intel] == [
        ("intel-patrols", 1_500, 20),
        ("intel-shortcut", 4_000, 40),
    ]
    assert (view.attitude, view.attitude_word, view.memory_count, view.last_deal) == (
        0,
        "neutral",
        0,
        None,
    )


def test_passage_news_and_memories_are_read(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.add_world_event("omega-station", "Customs raid at Omega station: spice seized.")
        tx.remember(
            DOCK_MASTER,
            PLAYER_ID,
            "They sold 4 fuel cells for 1,800 (450 each).",
            kind="trade",
            action="sold",
            good_id="fuel",
            qty=4,
            price=1_800,
        )
    view = parse_scene(world.scene(DOCK_MASTER, PLAYER_ID))
    assert [(p.destination_id, p.fare, p.days) for p in view.passages] == [
        ("ceres-deep", 1_800, 1),
        ("kessler-hollow", 2_500, 2),
    ]
    assert view.news == ["Customs raid at Omega station: spice seized."]
    assert view.memory_count == 1
    assert view.last_deal is not None
    assert (view.last_deal.action, view.last_deal.qty, view.last_deal.total) == ("sold", 4, 1_800)
    assert view.last_deal.good == "fuel cells"


def test_a_hostile_broker_and_free_intel(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
    view = parse_scene(world.scene(BROKER, PLAYER_ID))
    assert (view.attitude, view.attitude_word) == (-30, "hostile")
    assert [(j.id, j.min_attitude) for j in view.open_jobs] == [("quest-parts", 0)]
    dock = parse_scene(world.scene(DOCK_MASTER, PLAYER_ID))
    assert [(i.id, i.price) for i in dock.intel] == [("intel-hiring", 0)]


def test_a_changes_block_read_over_the_first_scene_gives_the_scene_now(
    world: VoyageWorld,
) -> None:
    # On a local model the brain is sent the first scene and then only how it changed.
    first = world.scene(SMUGGLER, PLAYER_ID)
    with world.transaction() as tx:
        tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", 2)
        tx.add_credits(PLAYER_ID, -900)
        tx.add_credits(SMUGGLER, 900)
        tx.accept_quest("quest-medgel", PLAYER_ID)  # its "on offer" line goes
        tx.set_attitude(SMUGGLER, PLAYER_ID, 35)
    now = world.scene(SMUGGLER, PLAYER_ID)
    block = scene_changes(first, now)
    assert GONE_PREFIX + "Jobs on offer to the player: " in block
    read = apply_changes(parse_scene(first), block)
    expected = parse_scene(now)
    memory = {"memory_count", "hearsay_count", "last_deal", "word"}
    for name in (f.name for f in dataclasses.fields(SceneView) if f.name not in memory):
        assert getattr(read, name) == getattr(expected, name), name
    assert read.open_jobs == [] and read.their_jobs and read.held("fuel") == 2

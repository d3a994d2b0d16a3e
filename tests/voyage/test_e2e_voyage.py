"""Omega station end to end: a WebSocket client, the NPC server, the agent loop, and the offline
brain answering as the mock LLM over real HTTP."""

from __future__ import annotations

from pathlib import Path

from voyage_e2e_support import Player, actions, line, mood, offers, serving_voyage

from starharness.voyage import VoyageWorld
from starharness.voyage.content import BROKER, PLAYER_ID, SMUGGLER
from world_support import WorldPlace


def _visits(world: VoyageWorld) -> list[str]:
    with world.snapshot() as reader:
        return [m.text for m in reader.memories(SMUGGLER, PLAYER_ID) if m.kind == "visit"]


async def test_a_full_visit_greet_buy_refusal_haggle_leave(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_voyage(tmp_path, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        welcome = await me.hello()
        assert welcome["t"] == "welcome"
        assert welcome["hud"]["credits"] == 12_000
        assert {"id": SMUGGLER, "name": "Jonah Karsk", "locationId": "omega-station"} in welcome[
            "npcs"
        ]

        greeting = await me.open("e1", SMUGGLER)
        assert greeting[0] == {
            "t": "encounter.opened",
            "id": "e1",
            "npcName": "Jonah Karsk",
            "attitude": 0,
        }
        assert "fuel cells at 450 (40 left)" in line(greeting)
        first = offers(greeting)[0]
        assert (first["label"], first["offer"]["cost"]) == ("Buy 5 fuel cells at 450", "2,250 cr")
        assert actions(greeting) == []

        bought = await me.pick("e1", first["id"])
        assert actions(bought) == [("player_buys", True)]
        assert bought[0]["summary"] == "Bought 5 fuel cells for 2,250 credits."
        assert "Pleasure doing business" in line(bought)
        huds = [f["data"] for f in bought if f["t"] == "hud"]
        assert huds and huds[-1]["credits"] == 9_750
        assert huds[-1]["cargo"] == [{"goodId": "fuel", "name": "fuel cells", "qty": 5}]

        refused = await me.say("e1", "I'll buy 5 nebula spice")
        assert actions(refused) == [("player_buys", False)]
        assert "You have 9,750, kid, the deal is 14,500." in line(refused)
        assert offers(refused)[0]["label"] == "Buy 3 nebula spice at 2,900"
        assert stack.world.player_view(PLAYER_ID)["credits"] == 9_750

        warm = stack.world.attitude(SMUGGLER, PLAYER_ID)
        haggled = await me.say("e1", "5 fuel for 200 each")
        assert actions(haggled) == [("change_attitude", True)]
        assert mood(haggled) == "annoyed"
        assert stack.world.attitude(SMUGGLER, PLAYER_ID) < warm

        farewell = await me.say("e1", "bye")
        assert "Safe travels" in line(farewell)
        assert (await me.close("e1"))["code"] == "unknown_encounter"
        visits = _visits(stack.world)
        assert len(visits) == 1
        assert "Bought 5 fuel cells for 2,250 credits." in visits[0]


async def test_a_return_visit_recalls_the_last_deal(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_voyage(tmp_path, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        first = await me.open("e1", SMUGGLER)
        assert "Back again" not in line(first)
        asked = await me.say("e1", "buy 2 medical gel")
        await me.pick("e1", offers(asked)[0]["id"])
        await me.close("e1")
        assert len(_visits(stack.world)) == 1

        again = await me.open("e2", SMUGGLER)
        assert line(again).startswith("Back again, kid.")
        assert "Last time you bought 2 medical gel off me for 2,200." in line(again)


async def test_a_world_tick_reaches_clients_and_the_next_scene(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_voyage(tmp_path, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        await me.send({"t": "world.tick", "days": 3})
        frames = await me.until(lambda f: f["t"] == "hud")
        events = [f for f in frames if f["t"] == "world.event"]
        raid = [e for e in events if e["locationId"] == "omega-station"]
        assert raid and "Customs raid" in raid[0]["headline"]
        assert frames[-1]["data"]["day"] == 4

        greeting = await me.open("e1", SMUGGLER)
        assert "Day 4." in stack.world.scene(SMUGGLER, PLAYER_ID)
        scene_sent = stack.mock.requests[-1].body["messages"]
        assert any(raid[0]["headline"] in str(m.get("content")) for m in scene_sent)
        with stack.world.snapshot() as reader:
            price = reader.price("omega-station", "spice")
        assert price is not None and f"nebula spice at {price:,}" in line(greeting)
        news = await me.say("e1", "heard any news?")
        assert raid[0]["headline"] in line(news)


async def test_an_npc_elsewhere_is_unavailable(tmp_path: Path) -> None:
    async with serving_voyage(tmp_path) as stack, Player(stack.running.ws_url, PLAYER_ID) as me:
        await me.hello()
        frames = await me.open("e1", BROKER)
        assert frames[-1]["t"] == "error"
        assert frames[-1]["code"] == "npc_unavailable"
        assert stack.mock.requests == []

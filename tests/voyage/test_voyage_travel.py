"""Travel is an event, through the real server and WebSocket on the offline brain: buying passage
ends the encounter with a farewell, the `hud` frame shows the new place and its people, and the
voyage's days pass on the world's clock. A player stranded with too little for any fare (the
issue's walk: fuel and gel bought at Omega, passage to Ceres Deep) still has a way back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voyage_e2e_support import Frame, Player, actions, line, offers, serving_voyage

from starharness.voyage.content import DOCK_MASTER, PLAYER_ID, QUARTERMASTER, SMUGGLER


def _hud(frames: list[Frame]) -> dict[str, Any]:
    return [f for f in frames if f["t"] == "hud"][-1]["data"]


def _offer(frames: list[Frame], label: str) -> str:
    found = [item["id"] for item in offers(frames) if item["label"].startswith(label)]
    assert found, f"no offer {label!r} in {offers(frames)}"
    return found[0]


async def test_passage_ends_the_encounter_and_arrives_on_a_later_day(tmp_path: Path) -> None:
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        welcome = await me.hello()
        assert welcome["hud"]["location"]["people"] == [
            {"id": DOCK_MASTER, "name": "Ilse Brandt"},
            {"id": SMUGGLER, "name": "Jonah Karsk"},
        ]
        await me.open("ilse", DOCK_MASTER)
        asked = await me.say("ilse", "I need passage")
        left = await me.pick("ilse", _offer(asked, "Passage to Ceres Deep"))

        cards = [(f["name"], f["ok"], f["summary"]) for f in left if f["t"] == "action"]
        assert cards == [
            (
                "book_passage",
                True,
                "Bought passage to Ceres Deep for 1,800 credits: 1 day out, arrived on day 2.",
            )
        ]
        hud = _hud(left)
        assert hud["day"] == welcome["hud"]["day"] + 1
        assert hud["location"] == {
            "id": "ceres-deep",
            "name": "Ceres Deep",
            "description": "The mining co-op's depot. Ore is cheap here; everything else is "
            "shipped in.",
            "people": [{"id": QUARTERMASTER, "name": "Nadia Okoro"}],
        }
        farewell = line(left)
        assert "Fair winds" in farewell and "prices" not in farewell.lower()
        assert "What are your prices?" not in str([f for f in left if f["t"] == "options"])
        assert left[-1]["t"] == "encounter.idle"

        # The player has left Ilse: she no longer answers on that encounter.
        await me.send({"t": "encounter.say", "id": "ilse", "text": "What are your prices?"})
        refused = await me.until(lambda f: f["t"] in ("error", "say.end"))
        assert refused[-1]["t"] == "error" and refused[-1]["code"] == "unknown_encounter"
        # The client's own close of it is quiet, as any close: the next frames are Okoro's.
        await me.send({"t": "encounter.close", "id": "ilse"})
        # Okoro, who is here, does.
        met = await me.open("okoro", QUARTERMASTER)
        assert line(met) and not [f for f in met if f["t"] == "error"]
        # The ended encounter holds none of the connection's slots (at most 8 may be open).
        (connection,) = stack.running.server.connections
        assert set(connection.encounters) == {"okoro"}


async def test_a_player_short_of_the_fare_back_works_the_passage(tmp_path: Path) -> None:
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        greeted = await me.open("karsk", SMUGGLER)
        await me.pick("karsk", _offer(greeted, "Buy 5 fuel cells"))
        # "Buy 5 medical gel at 1,100" is pending after the fuel: the line restates it.
        bought = await me.say("karsk", "buy 5 medical gel")
        assert actions(bought) == [("player_buys", True)]
        await me.close("karsk")
        greeted = await me.open("ilse", DOCK_MASTER)
        bought = await me.pick("ilse", _offer(greeted, "Buy 5 fuel cells"))
        asked = await me.say("ilse", "I need passage")
        arrived = await me.pick("ilse", _offer(asked, "Passage to Ceres Deep"))
        assert _hud(arrived)["credits"] == 200

        asked = await me.open("okoro", QUARTERMASTER)
        asked = await me.say("okoro", "I need passage back to Omega")
        assert "work your passage" in line(asked)
        home = await me.pick("okoro", _offer(asked, "Work your passage to Omega station"))
        assert actions(home) == [("book_passage", True)]
        hud = _hud(home)
        assert hud["credits"] == 200 and hud["location"]["id"] == "omega-station"

"""Travel: the conversation ends when the player leaves, and the page shows the new place.

The fake harness flies the player to Kessler Hollow in the middle of a turn (a committed action,
then the `hud` with the new location, then the NPC's farewell), ending the turn as the harness
does (options, idle, then the encounter is gone) or with `encounter.closed`. Either way the
dialogue closes on the farewell, never offers the stale replies, and the people list and HUD are
the Hollow's. The last test buys passage for real, from Omega station's offline brain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_harness import AWAY, FAREWELL, GREETING, HOME, NPCS, PLAYER, TRAVEL_TEXT, FakeHarness
from playwright.async_api import Page, expect
from real_stack import omega_station
from test_web_e2e import FrameLog

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

BRANDT = "npc-brandt"
VEX = "npc-vex"


async def _talk_then_travel(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id(f"npc-button-{BRANDT}").click()
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    await page.get_by_test_id("say-text").fill(TRAVEL_TEXT)
    await page.get_by_test_id("say-send").click()


async def _assert_at_the_hollow(page: Page) -> None:
    dialogue = page.get_by_test_id("dialogue")
    await expect(dialogue).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-npc")).to_have_text("Nobody")
    await expect(page.get_by_test_id("dialogue-hint")).to_contain_text(FAREWELL)
    await expect(page.get_by_test_id("options").get_by_role("button")).to_have_count(0)
    await expect(page.get_by_test_id("say-text")).to_be_disabled()
    await expect(page.get_by_test_id("hud-location")).to_have_text(AWAY["name"])
    await expect(page.get_by_test_id("hud-attitude")).to_have_text("Not talking to anyone")
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Vex")
    await expect(page.get_by_test_id("title-place")).to_have_text(f"· {AWAY['name']}")
    await expect(page.get_by_test_id("place-description")).to_have_text(AWAY["description"])
    # Omega's bar is Omega station's; the Hollow is drawn as a plain room.
    assert await page.evaluate("() => window.starHarness.place()") == "room"
    assert await page.evaluate("() => window.starHarness.encounter()") is None
    # Whoever is here can be talked to at once.
    await page.get_by_test_id(f"npc-button-{VEX}").click()
    await expect(page.get_by_test_id("dialogue-npc")).to_have_text("Vex")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
    # A harness that ended the encounter first answers the page's close with unknown_encounter:
    # expected, so the player sees no problem (it came before Vex's greeting on the socket).
    await expect(page.get_by_test_id("problem")).to_have_count(0)


async def test_a_passage_mid_turn_ends_the_conversation_on_the_farewell(
    page: Page, harness: FakeHarness
) -> None:
    await _talk_then_travel(page, harness)
    await _assert_at_the_hollow(page)
    # The page tells the harness it walked away from the NPC it left behind.
    opened = harness.frames("encounter.open")[0]
    closed = await harness.wait_for("encounter.close")
    assert closed["id"] == opened["id"]


async def test_encounter_closed_from_the_harness_ends_the_conversation(
    page: Page, harness: FakeHarness
) -> None:
    harness.closes_on_travel = True
    await _talk_then_travel(page, harness)
    await _assert_at_the_hollow(page)
    # The harness closed it itself: nothing to close back.
    assert harness.frames("encounter.close") == []


async def test_moving_between_turns_closes_the_conversation_at_once(
    page: Page, harness: FakeHarness
) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id(f"npc-button-{BRANDT}").click()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    harness.location = dict(AWAY)
    await harness.push({"t": "hud", "playerId": PLAYER, "data": harness.hud()})
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-hint")).to_have_text(
        "Ilse Brandt is not here any more."
    )
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Vex")
    await harness.wait_for("encounter.close")


async def test_a_welcome_at_a_new_place_shows_its_people(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await expect(page.get_by_test_id("people-list")).to_contain_text("Ilse Brandt")
    harness.location = dict(AWAY)
    await harness.push({"t": "welcome", "protocol": 1, "hud": harness.hud(), "npcs": NPCS})
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Vex")
    await expect(page.get_by_test_id("people-elsewhere")).to_contain_text("Ilse Brandt")
    await expect(page.get_by_test_id("hud-location")).to_have_text(AWAY["name"])


async def test_the_view_says_who_is_here_when_people_move(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Jonah Karsk2 Ilse Brandt")
    await expect(page.get_by_test_id("place-description")).to_be_hidden()
    await page.get_by_test_id(f"npc-button-{BRANDT}").click()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    # Ilse left the station (the player did not): the view's own list of people says so.
    harness.location = {**HOME, "people": [{"id": "npc-karsk", "name": "Jonah Karsk"}]}
    await harness.push({"t": "hud", "playerId": PLAYER, "data": harness.hud()})
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Jonah Karsk")
    await expect(page.get_by_test_id("people-elsewhere")).to_have_text(
        "Elsewhere: Ilse Brandt, Vex (Kessler Hollow)."
    )
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-hint")).to_have_text(
        "Ilse Brandt is not here any more."
    )
    await expect(page.get_by_test_id("hud-location")).to_have_text(HOME["name"])


async def test_a_passage_through_the_real_server(page: Page, tmp_path: Path) -> None:
    """Omega station with its offline brain: buying passage from Ilse ends her conversation on
    her farewell and shows Ceres Deep, with no problem shown for the harness's own ending."""
    async with omega_station(tmp_path) as stack:
        log = FrameLog(page)
        await page.goto(stack.url)
        mark = log.mark()
        await page.get_by_test_id(f"npc-button-{BRANDT}").click()
        await log.until("encounter.idle", mark)
        for _ in range(3):  # ask about passage, then take the offer
            items = log.since(mark, "options")[-1]["items"]
            number = _passage_option(items)
            mark = log.mark()
            await page.get_by_test_id(f"option-{number}").click()
            await log.until("encounter.idle", mark)
            if any(f["t"] == "action" and f["ok"] for f in log.frames[mark:]):
                break
        farewell = "".join(f["text"] for f in log.since(mark, "say.delta"))
        await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
        await expect(page.get_by_test_id("dialogue-hint")).to_contain_text(farewell.strip())
        await expect(page.get_by_test_id("hud-location")).to_have_text("Ceres Deep")
        await expect(page.get_by_test_id("people-list")).not_to_contain_text("Ilse Brandt")
        await expect(page.get_by_test_id("options").get_by_role("button")).to_have_count(0)
        # The page's close reaches a harness that already ended it; the answer is not shown.
        await page.get_by_test_id("advance").click()
        await expect(page.get_by_test_id("ticker").locator("li").first).not_to_have_text(
            "No news yet."
        )
        await expect(page.get_by_test_id("problem")).to_have_count(0)


def _passage_option(items: list[dict[str, Any]]) -> int:
    """The 1-based number of the passage offer to Ceres Deep, else of a reply asking for one."""
    for number, item in enumerate(items, 1):
        if item.get("offer", {}).get("action") == "book_passage" and "Ceres" in item["label"]:
            return number
    for number, item in enumerate(items, 1):
        if "passage" in item["label"].casefold():
            return number
    raise AssertionError(f"no passage on offer: {items}")

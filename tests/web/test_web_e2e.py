"""End to end: the browser client against the real server, Omega station and the offline brain."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, WebSocket, expect
from real_stack import RealStack, omega_station
from web_support import assert_png, figure_point, screenshot_path, wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PLAYER = "player-1"
SMUGGLER = "npc-karsk"
UNAFFORDABLE = "I'll buy 6 nebula spice"
"""6 x 2,900 credits: more than the 12,000 a new captain has."""


@pytest_asyncio.fixture(loop_scope="module")
async def stack(tmp_path: Path) -> AsyncIterator[RealStack]:
    async with omega_station(tmp_path) as running:
        yield running


class FrameLog:
    """Every frame the page's WebSocket received, as the browser saw it."""

    def __init__(self, page: Page) -> None:
        self.frames: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        page.on("websocket", self._watch)

    def _watch(self, ws: WebSocket) -> None:
        ws.on("framereceived", self._received)

    def _received(self, payload: str | bytes) -> None:
        self.frames.append(json.loads(payload))
        self._arrived.set()

    def of(self, t: str) -> list[dict[str, Any]]:
        return [frame for frame in self.frames if frame["t"] == t]

    def mark(self) -> int:
        return len(self.frames)

    def since(self, mark: int, t: str) -> list[dict[str, Any]]:
        return [frame for frame in self.frames[mark:] if frame["t"] == t]

    async def until(self, t: str, after: int = 0) -> dict[str, Any]:
        try:
            async with asyncio.timeout(15):
                while not (found := self.since(after, t)):
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            seen = [frame["t"] for frame in self.frames[after:]]
            raise AssertionError(f"no {t!r} frame within 15 s; the page got {seen}") from None
        return found[0]


def _spoken(frames: list[dict[str, Any]]) -> str:
    return "".join(frame["text"] for frame in frames if frame["t"] == "say.delta")


async def _turn_frames(log: FrameLog, after: int) -> list[dict[str, Any]]:
    await log.until("encounter.idle", after)
    end = next(i for i in range(after, len(log.frames)) if log.frames[i]["t"] == "encounter.idle")
    return log.frames[after : end + 1]


def _first_offer(items: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The 1-based number and the item of the first offer among `items`."""
    for number, item in enumerate(items, 1):
        if "offer" in item:
            return number, item
    raise AssertionError(f"no offer among the options: {items}")


async def _credits_in_world(stack: RealStack) -> int:
    view: dict[str, Any] = await asyncio.to_thread(stack.world.player_view, PLAYER)
    return int(view["credits"])


async def test_play_omega_station_in_the_browser(
    page: Page, stack: RealStack, tmp_path: Path
) -> None:
    log = FrameLog(page)
    await page.goto(stack.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")
    welcome = await log.until("welcome")
    start_credits: int = welcome["hud"]["credits"]
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{start_credits:,} cr")

    # Everyone at the player's location stands in the bar; the rest are listed as elsewhere.
    here = welcome["hud"]["location"]["id"]
    present = [npc for npc in welcome["npcs"] if npc["locationId"] == here]
    away = [npc for npc in welcome["npcs"] if npc["locationId"] != here]
    assert SMUGGLER in {npc["id"] for npc in present} and away
    await expect(page.get_by_test_id("people-list").get_by_role("button")).to_have_count(
        len(present)
    )
    for npc in away:
        await expect(page.get_by_test_id("people-elsewhere")).to_contain_text(npc["name"])

    # Click the smuggler's figure; his greeting streams into the dialogue panel.
    mark = log.mark()
    point = await figure_point(page, SMUGGLER)
    await page.mouse.click(point["x"], point["y"])
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "open")
    greeting = await _turn_frames(log, mark)
    opened = greeting[0]
    assert opened["t"] == "encounter.opened"
    assert len([f for f in greeting if f["t"] == "say.delta"]) > 1  # streamed, not one blob
    await expect(page.get_by_test_id("dialogue-npc")).to_have_text(opened["npcName"])
    await expect(page.get_by_test_id("npc-line")).to_have_text(_spoken(greeting))
    await expect(page.get_by_test_id("hud-attitude")).to_contain_text(
        f"{opened['npcName']}: {opened['attitude']}"
    )

    # He offers a sale: an offer card with its cost. Greeting him committed nothing.
    assert not [f for f in greeting if f["t"] == "action" and f["ok"]], "walking up committed"
    assert await _credits_in_world(stack) == start_credits
    items: list[dict[str, Any]] = log.since(mark, "options")[-1]["items"]
    number, buy = _first_offer(items)
    offer = page.get_by_test_id(f"option-{number}")
    await expect(offer).to_have_class("option is-offer")
    await expect(offer.get_by_test_id("offer-cost")).to_have_text(
        f"You give {buy['offer']['cost']}"
    )
    await expect(offer.get_by_test_id("offer-accept")).to_be_visible()

    # Accept it: the trade commits before he speaks and the HUD credits drop.
    mark = log.mark()
    await offer.click()
    bought = await _turn_frames(log, mark)
    assert bought[0]["t"] == "action" and bought[0]["ok"], f"accepting did not commit: {bought}"
    trades = [f for f in bought if f["t"] == "action" and f["ok"]]
    assert len(trades) == 1, f"accepting {buy['label']!r} committed {len(trades)} times: {bought}"
    await expect(page.get_by_test_id("action-ok").first).to_contain_text(trades[0]["summary"])
    credits = await _credits_in_world(stack)
    assert credits < start_credits
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{credits:,} cr")
    await expect(page.get_by_test_id("npc-line")).to_have_text(_spoken(bought))

    # Ask for more than the player can pay: the guard refuses and nothing changes.
    mark = log.mark()
    await page.get_by_test_id("say-text").fill(UNAFFORDABLE)
    await page.get_by_test_id("say-text").press("Enter")
    refused_turn = await _turn_frames(log, mark)
    refusals = [f for f in refused_turn if f["t"] == "action" and not f["ok"]]
    assert refusals, f"{UNAFFORDABLE!r} was not refused: {refused_turn}"
    refused = page.get_by_test_id("action-refused")
    await expect(refused).to_contain_text("Refused")
    await expect(refused).to_contain_text(refusals[0]["summary"])
    await expect(page.get_by_test_id("npc-line")).to_have_text(_spoken(refused_turn))
    assert await _credits_in_world(stack) == credits
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{credits:,} cr")

    # Advance five days: the news ticker shows what happened, the HUD the new day.
    mark = log.mark()
    await page.get_by_test_id("advance").click()
    hud = await log.until("hud", mark)
    events = log.since(mark, "world.event")
    assert events, "five days passed without news"
    await expect(page.get_by_test_id("hud-day")).to_have_text(str(hud["data"]["day"]))
    for event in events[-3:]:
        await expect(page.get_by_test_id("ticker")).to_contain_text(event["headline"])

    shot = screenshot_path("browser-client.png", tmp_path)
    await page.screenshot(path=str(shot), animations="disabled")
    assert_png(shot)

    # Walk away with Escape; the harness closes the encounter.
    await page.keyboard.press("Escape")
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")

"""A scene in the browser: the player talks to Karsk and Brandt at Omega station's bar together,
against the real server and the offline brain. Each line shows its speaker, the player picks
whom to talk to (or everyone), and at 1280x800 and 800x600 nothing overlaps and the speakers'
names are readable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect
from real_stack import RealStack
from test_web_e2e import FrameLog
from web_support import (
    COVERED_BY,
    assert_png,
    inside,
    overlap,
    screenshot_path,
    wait_for_client,
)

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SMUGGLER = "npc-karsk"
DOCK_MASTER = "npc-brandt"
SIZES = [(1280, 800), (800, 600)]

_BOXES = """() => {
  const box = (id) => {
    const el = document.getElementById(id);
    return el && !el.hidden ? el.getBoundingClientRect().toJSON() : null;
  };
  return {
    header: document.querySelector(".dialogue-header").getBoundingClientRect().toJSON(),
    body: box("dialogue-body"),
    addressee: box("addressee"),
    form: box("say-form"),
    panel: box("dialogue"),
    hud: box("hud"),
    people: document.querySelector(".people").getBoundingClientRect().toJSON(),
    speaker: box("npc-speaker"),
    line: box("npc-line"),
    choices: [...document.querySelectorAll("#addressee button")].map(
      (b) => b.getBoundingClientRect().toJSON()),
    width: window.innerWidth,
    pageWidth: document.documentElement.scrollWidth,
  };
}"""


async def _turn(page: Page, log: FrameLog, text: str) -> list[dict[str, Any]]:
    mark = log.mark()
    await page.get_by_test_id("say-text").fill(text)
    await page.get_by_test_id("say-send").click()
    await log.until("encounter.idle", mark)
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    return log.frames[mark:]


def _speakers(frames: list[dict[str, Any]]) -> list[str]:
    return [f["speakerId"] for f in frames if f["t"] == "say.end"]


async def _no_overlaps(page: Page) -> None:
    boxes: dict[str, Any] = await page.evaluate(_BOXES)
    assert boxes["pageWidth"] <= boxes["width"], "the page scrolls sideways"
    regions = ["header", "body", "addressee", "form"]
    for i, a in enumerate(regions):
        for b in regions[i + 1 :]:
            assert not overlap(boxes[a], boxes[b]), (a, b, boxes[a], boxes[b])
    for region in regions:
        assert inside(boxes[region], boxes["panel"]), (region, boxes[region], boxes["panel"])
        assert not overlap(boxes[region], boxes["hud"]), region
        assert not overlap(boxes[region], boxes["people"]), region
    choices = boxes["choices"]
    assert len(choices) == 3  # Everyone, Karsk, Brandt
    for i, a in enumerate(choices):
        assert inside(a, boxes["addressee"])
        for b in choices[i + 1 :]:
            assert not overlap(a, b)
    # The speaker's name sits above the line, both within the scrolling body.
    assert boxes["speaker"] is not None and boxes["speaker"]["bottom"] <= boxes["line"]["top"] + 1
    for name in ("speaker", "line"):
        assert inside(boxes[name], boxes["body"]), (name, boxes[name], boxes["body"])
    for test_id in ("npc-speaker", "address-everyone", "say-send"):
        covered = await page.get_by_test_id(test_id).evaluate(COVERED_BY)
        assert covered is None, f"{test_id} is covered by {covered}"


@pytest.mark.parametrize("sized_page", SIZES, indirect=True, ids=["1280x800", "800x600"])
async def test_a_scene_at_the_bar_shows_who_speaks_and_lets_the_player_pick_whom_to_talk_to(
    sized_page: Page, stack: RealStack, tmp_path: Path
) -> None:
    page = sized_page
    log = FrameLog(page)
    await page.goto(stack.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")

    # Two people at the bar: the page offers to talk to them together.
    group = page.get_by_test_id("people-group")
    await expect(group).to_be_visible()
    await expect(group).to_be_enabled()
    mark = log.mark()
    await group.click()
    opened = await log.until("encounter.opened", mark)
    # Everyone here, in the people list's order; the first of them greets.
    names = {npc["id"]: npc["name"] for npc in opened["npcs"]}
    assert set(names) == {SMUGGLER, DOCK_MASTER}
    first = opened["npcs"][0]["id"]
    assert opened["speakerId"] == first
    await log.until("encounter.idle", mark)
    await expect(page.get_by_test_id("dialogue-npc")).to_have_text(" & ".join(names.values()))
    await expect(page.get_by_test_id("npc-speaker")).to_have_text(f"{names[first]}:")
    await expect(page.get_by_test_id("addressee")).to_be_visible()
    await expect(page.get_by_test_id("address-everyone")).to_have_attribute("aria-checked", "true")

    # Naming Brandt in the words: she answers, and her name shows over her line.
    frames = await _turn(page, log, "Brandt, what are you selling today?")
    assert _speakers(frames) == [DOCK_MASTER]
    speaker = page.get_by_test_id("npc-speaker")
    await expect(speaker).to_have_text("Ilse Brandt:")
    await expect(speaker).to_have_attribute("data-speaker-id", DOCK_MASTER)
    await expect(page.get_by_test_id("player-line")).to_have_text(
        "You, to everyone: Brandt, what are you selling today?"
    )

    # Picking Karsk in the Talk-to row: the next words go to him, whatever they say.
    await page.get_by_test_id(f"address-{SMUGGLER}").click()
    await expect(page.get_by_test_id(f"address-{SMUGGLER}")).to_have_attribute(
        "aria-checked", "true"
    )
    await expect(page.get_by_test_id("say-text")).to_have_attribute(
        "placeholder", "Say something to Jonah Karsk…"
    )
    frames = await _turn(page, log, "And what do you have for sale?")
    assert _speakers(frames) == [SMUGGLER]
    await expect(speaker).to_have_text("Jonah Karsk:")
    await expect(page.get_by_test_id("options")).to_have_attribute(
        "aria-label", "Replies to Jonah Karsk"
    )

    # Both named: two lines, each under its speaker's name, the first kept above the second.
    await page.get_by_test_id("address-everyone").click()
    frames = await _turn(page, log, "Karsk, Brandt: what is the news?")
    assert _speakers(frames) == [SMUGGLER, DOCK_MASTER]
    earlier = page.get_by_test_id("scene-said")
    await expect(earlier).to_have_count(1)
    await expect(earlier).to_have_attribute("data-speaker-id", SMUGGLER)
    await expect(earlier.get_by_test_id("speaker-name")).to_have_text("Jonah Karsk:")
    await expect(speaker).to_have_text("Ilse Brandt:")
    # The two names are drawn in two different colours.
    colours = await page.evaluate(
        """() => [...document.querySelectorAll('#turn [data-testid="speaker-name"]')]
            .map((el) => getComputedStyle(el).color)"""
    )
    assert len(colours) == 2 and colours[0] != colours[1], colours

    await _no_overlaps(page)
    # Both lines of the round are in view together, the first above the second.
    first = await earlier.bounding_box()
    second = await page.get_by_test_id("npc-line").bounding_box()
    body = await page.get_by_test_id("dialogue-body").bounding_box()
    assert first is not None and second is not None and body is not None
    assert body["y"] - 0.5 <= first["y"] < second["y"]
    assert second["y"] + second["height"] <= body["y"] + body["height"] + 0.5
    width = page.viewport_size["width"] if page.viewport_size else 0
    shot = screenshot_path(f"scene-{width}.png", tmp_path)
    await page.screenshot(path=str(shot))
    assert_png(shot)

    # Walking away ends the scene: the Talk-to row goes with it.
    await page.get_by_test_id("walk-away").click()
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("addressee")).to_be_hidden()

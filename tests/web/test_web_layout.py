"""The page's layout at several window sizes.

Against the real server and the offline brain: after six trades the NPC's latest line must be
fully shown (not clipped, not scrolled away, not under the HUD), earlier turns folded into the
history, and every reply reachable and clickable. Against the fake harness: after ten turns with
a long conversation, a long cargo list and news, no region of the page overlaps another (HUD,
people, name labels, dialogue header and body, Say box, ticker), nothing is clipped, and the
latest line and the Say box are in view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_harness import LONG_CARGO, STORY, STORY_TEXT, FakeHarness
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
TRADES = 6
SIZES = [(1280, 800), (1024, 768), (800, 600), (390, 844)]
"""Desktop, small laptop, a small window, and a narrow portrait (phone-sized) window."""
CROWDED_SIZES = [(1280, 800), (800, 600), (390, 844)]
TURNS = 10

_GEOMETRY = """() => {
  const box = (id) => document.getElementById(id).getBoundingClientRect().toJSON();
  const line = document.getElementById("npc-line");
  return {
    scrollHeight: line.scrollHeight,
    clientHeight: line.clientHeight,
    line: box("npc-line"),
    panel: box("dialogue"),
    header: document.querySelector(".dialogue-header").getBoundingClientRect().toJSON(),
    hud: box("hud"),
    width: window.innerWidth,
    height: window.innerHeight,
    pageWidth: document.documentElement.scrollWidth,
  };
}"""


async def _turn(log: FrameLog, mark: int) -> list[dict[str, Any]]:
    await log.until("encounter.idle", mark)
    return log.frames[mark:]


def _trade_option(items: list[dict[str, Any]]) -> int:
    """The 1-based number of the first offer (a trade the player accepts by picking it)."""
    for number, item in enumerate(items, 1):
        if "offer" in item:
            return number
    raise AssertionError(f"no trade on offer: {items}")


async def _assert_line_shown(page: Page, spoken: str, size: tuple[int, int]) -> None:
    await expect(page.get_by_test_id("npc-line")).to_have_text(spoken)
    g: dict[str, Any] = await page.evaluate(_GEOMETRY)
    where = f"at {size[0]}x{size[1]}: {g}"
    assert g["scrollHeight"] == g["clientHeight"], f"the NPC line is clipped {where}"
    line, panel, header = g["line"], g["panel"], g["header"]
    assert line["top"] >= header["bottom"] - 0.5, f"the line hides under the header {where}"
    assert line["bottom"] <= min(panel["bottom"], g["height"]) + 0.5, f"line cut off {where}"
    assert line["top"] >= 0 and line["bottom"] > line["top"], f"line out of view {where}"
    assert not overlap(g["hud"], panel), f"the HUD overlaps the dialogue {where}"
    assert g["pageWidth"] <= g["width"], f"the page scrolls sideways {where}"


async def _assert_options_reachable(page: Page, count: int) -> None:
    buttons = page.get_by_test_id("options").get_by_role("button")
    await expect(buttons).to_have_count(count)
    for index in range(count):
        button = buttons.nth(index)
        await button.scroll_into_view_if_needed()
        await expect(button).to_be_in_viewport()
        await expect(button).to_be_enabled()
        covered = await button.evaluate(COVERED_BY)
        assert covered is None, f"reply {index + 1} is covered by {covered}"


@pytest.mark.parametrize("sized_page", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_latest_line_stays_in_full_view_after_six_trades(
    sized_page: Page, stack: RealStack, tmp_path: Path
) -> None:
    page = sized_page
    viewport = page.viewport_size or {"width": 0, "height": 0}
    size = (viewport["width"], viewport["height"])
    log = FrameLog(page)
    await page.goto(stack.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")

    mark = log.mark()
    await page.get_by_test_id(f"npc-button-{SMUGGLER}").click()
    frames = await _turn(log, mark)
    spoken = "".join(f["text"] for f in frames if f["t"] == "say.delta")
    await _assert_line_shown(page, spoken, size)

    committed = 0
    for trade in range(1, TRADES + 1):
        items = log.since(mark, "options")[-1]["items"]
        number = _trade_option(items)
        mark = log.mark()
        await page.get_by_test_id(f"option-{number}").click()
        frames = await _turn(log, mark)
        committed += any(f["t"] == "action" and f["ok"] for f in frames)
        spoken = "".join(f["text"] for f in frames if f["t"] == "say.delta")
        await _assert_line_shown(page, spoken, size)
        # Earlier turns are folded away, this turn's cards stay beside the line.
        await expect(page.get_by_test_id("history-turn")).to_have_count(trade)
        now = [f for f in frames if f["t"] == "action"]
        await expect(page.get_by_test_id("action-cards").locator("li")).to_have_count(len(now))
    assert committed == TRADES, f"{committed} of {TRADES} trades committed"

    shot = screenshot_path(f"dialogue-{size[0]}x{size[1]}.png", tmp_path)
    await page.screenshot(path=str(shot), animations="disabled")
    assert_png(shot)

    items = log.since(mark, "options")[-1]["items"]
    await _assert_options_reachable(page, len(items))
    # The history opens and scrolls; the latest line is still there in full afterwards.
    await page.get_by_test_id("history").locator("summary").click()
    await expect(page.get_by_test_id("history-list")).to_be_visible()
    await page.get_by_test_id("npc-line").scroll_into_view_if_needed()
    await _assert_line_shown(page, spoken, size)


_REGIONS = """() => {
  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  };
  const q = (selector) => rect(document.querySelector(selector));
  const line = document.getElementById("npc-line");
  // The count, its sign and the start of the item's name must be on one line.
  const cargo = [...document.querySelectorAll("#hud-cargo li")].map((li) => {
    const text = li.firstChild;
    const range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(text, Math.min(text.data.length, text.data.indexOf("×") + 3));
    const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    return { text: text.data, lines, ...rect(li) };
  });
  return {
    width: window.innerWidth,
    height: window.innerHeight,
    pageWidth: document.documentElement.scrollWidth,
    regions: {
      scene: q("#scene"),
      people: q(".people"),
      hud: q("#hud"),
      header: q(".dialogue-header"),
      body: q("#dialogue-body"),
      say: q("#say-form"),
      ticker: q(".ticker"),
    },
    line: rect(line),
    lineClipped: line.scrollHeight > line.clientHeight,
    lists: q("#hud-lists"),
    listsScroll: ((el) => ({
      hidden: el.scrollHeight > el.clientHeight, overflowY: getComputedStyle(el).overflowY,
    }))(document.getElementById("hud-lists")),
    labels: [...document.querySelectorAll(".figure-label:not([hidden])")].map((el) => ({
      name: el.textContent, clipped: el.scrollWidth > el.clientWidth, ...rect(el),
    })),
    persons: [...document.querySelectorAll(".person")].map((el) => ({
      name: el.textContent, ...rect(el),
    })),
    cargo,
  };
}"""


def _in_view(box: dict[str, Any], g: dict[str, Any]) -> bool:
    window = {"left": 0, "top": 0, "right": g["width"], "bottom": g["height"]}
    return inside(box, window)


async def _assert_laid_out(page: Page, where: str, scene_drawn: bool) -> None:
    g: dict[str, Any] = await page.evaluate(_REGIONS)
    at = f"{where}: {g}"
    assert g["pageWidth"] <= g["width"], f"the page scrolls sideways {at}"
    regions: dict[str, dict[str, Any]] = g["regions"]
    names = list(regions)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not overlap(regions[a], regions[b]), f"{a} overlaps {b} {at}"
    if scene_drawn:
        labels = g["labels"]
        assert {label["name"][1:] for label in labels} == {"Ilse Brandt", "Jonah Karsk"}, at
        for i, label in enumerate(labels):
            assert inside(label, regions["scene"]), f"{label['name']} is cut off {at}"
            assert not label["clipped"], f"{label['name']} is clipped {at}"
            for other in labels[i + 1 :]:
                assert not overlap(label, other), f"{label['name']} covers {other['name']} {at}"
    for person in g["persons"]:
        assert inside(person, regions["people"]), f"{person['name']} is cut off {at}"
    # A full hold scrolls inside the HUD (never squeezing the conversation), sideways never.
    assert inside(g["lists"], regions["hud"]), f"the hold is outside the HUD {at}"
    if g["listsScroll"]["hidden"]:
        assert g["listsScroll"]["overflowY"] == "auto", f"part of the hold is cut off {at}"
    for entry in g["cargo"]:
        assert entry["lines"] == 1, f"{entry['text']!r} wraps inside its count {at}"
        across = {**entry, "top": g["lists"]["top"], "bottom": g["lists"]["bottom"]}
        assert inside(across, g["lists"]), f"{entry['text']!r} is cut off {at}"
    assert not g["lineClipped"], f"the NPC line is clipped {at}"
    assert inside(g["line"], regions["body"]), f"the NPC line is scrolled away {at}"
    assert _in_view(g["line"], g), f"the NPC line is out of the window {at}"
    assert _in_view(regions["say"], g), f"the Say box is out of the window {at}"


@pytest.mark.parametrize("sized_page", CROWDED_SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_nothing_overlaps_after_ten_turns_with_a_full_hold(
    sized_page: Page, harness: FakeHarness
) -> None:
    page = sized_page
    viewport = page.viewport_size or {"width": 0, "height": 0}
    size = f"{viewport['width']}x{viewport['height']}"
    harness.cargo = LONG_CARGO
    await page.goto(harness.url)
    await wait_for_client(page)
    drawn: bool = await page.evaluate("() => window.starHarness.sceneAvailable")
    await expect(page.get_by_test_id("hud-cargo")).to_contain_text("1,500 × coffee")
    for day in (6, 11):
        await page.get_by_test_id("advance").click()
        await expect(page.get_by_test_id("hud-day")).to_have_text(str(day))
    await page.get_by_test_id(f"npc-button-{SMUGGLER}").click()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    await _assert_laid_out(page, f"at {size} after the greeting", drawn)

    for turn in range(1, TURNS + 1):
        if turn % 2:
            await page.get_by_test_id("option-1").click()  # two fuel cells: a card, a new HUD
            await expect(page.get_by_test_id("action-ok")).to_have_count(1)
        else:
            await page.get_by_test_id("say-text").fill(STORY_TEXT)
            await page.get_by_test_id("say-send").click()
            await expect(page.get_by_test_id("npc-line")).to_have_text(STORY)
        await expect(page.get_by_test_id("say-text")).to_be_enabled()
        await expect(page.get_by_test_id("history-turn")).to_have_count(turn)
        await _assert_laid_out(page, f"at {size} after turn {turn}", drawn)

    # Every good in the hold can be scrolled to.
    last = page.get_by_test_id("hud-cargo").locator("li").last
    await last.scroll_into_view_if_needed()
    await expect(last).to_be_in_viewport()
    shown = await last.evaluate(
        """(li) => {
          const box = li.closest(".hud-lists").getBoundingClientRect();
          const end = [...li.getClientRects()].at(-1);
          return end.top >= box.top - 0.5 && end.bottom <= box.bottom + 0.5;
        }"""
    )
    assert shown, f"the last good in the hold cannot be scrolled into view at {size}"

    # The folded history opens in place: its row is shown whole, below the header.
    await page.get_by_test_id("history").locator("summary").click()
    await expect(page.get_by_test_id("history-list")).to_be_visible()
    summary = page.locator("#history-summary")
    await summary.scroll_into_view_if_needed()
    covered = await summary.evaluate(COVERED_BY)
    assert covered is None, f"the history's row is covered by {covered} at {size}"
    # One more turn with it open: the page brings their line and the Say box back into view.
    await page.get_by_test_id("option-1").click()
    await expect(page.get_by_test_id("history-turn")).to_have_count(TURNS + 1)
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    await _assert_laid_out(page, f"at {size} with the history open", drawn)

"""The dialogue panel at four window sizes, against the real server and the offline brain.

After six trades the NPC's latest line must be fully shown (not clipped, not scrolled away, not
under the HUD), earlier turns folded into the history, and every reply reachable and clickable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect
from real_stack import RealStack, omega_station
from test_web_e2e import FrameLog
from web_support import assert_png, screenshot_path, wait_for_client, watch_page_errors

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SMUGGLER = "npc-karsk"
TRADES = 6
SIZES = [(1280, 800), (1024, 768), (800, 600), (390, 844)]
"""Desktop, small laptop, a small window, and a narrow portrait (phone-sized) window."""

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

_COVERED_BY = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit === el || el.contains(hit) ? null : (hit ? hit.outerHTML.slice(0, 80) : "nothing");
}"""


@pytest_asyncio.fixture(loop_scope="module")
async def stack(tmp_path: Path) -> AsyncIterator[RealStack]:
    async with omega_station(tmp_path) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def sized_page(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    width, height = request.param
    context = await browser.new_context(
        viewport={"width": width, "height": height}, reduced_motion="reduce"
    )
    page = await context.new_page()
    errors = watch_page_errors(page)
    try:
        yield page
    finally:
        await context.close()
    assert errors == [], f"the page threw: {errors}"


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


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
    assert not _overlap(g["hud"], panel), f"the HUD overlaps the dialogue {where}"
    assert g["pageWidth"] <= g["width"], f"the page scrolls sideways {where}"


async def _assert_options_reachable(page: Page, count: int) -> None:
    buttons = page.get_by_test_id("options").get_by_role("button")
    await expect(buttons).to_have_count(count)
    for index in range(count):
        button = buttons.nth(index)
        await button.scroll_into_view_if_needed()
        await expect(button).to_be_in_viewport()
        await expect(button).to_be_enabled()
        covered = await button.evaluate(_COVERED_BY)
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

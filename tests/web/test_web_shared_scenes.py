"""Two players in one scene in the browser: two pages, each with its own player token, talk to
everyone at Omega station's bar against the real server (revision 3) and the offline brain. The
second page joins the first's scene; each player's line shows on the other's page under their
name, apart from NPC lines and from the page's own; NPC lines show on both; an offer shows
only to the player it was made to; and at 1280x800 and 800x600 nothing overlaps and every text
is readable."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from fake_harness import FakeHarness
from playwright.async_api import Browser, Page, expect
from real_stack import SECOND_CAPTAIN, RealStack, omega_station_for_two
from test_web_e2e import FrameLog
from web_contrast import CONTRAST_JS, failures
from web_support import (
    COVERED_BY,
    assert_png,
    inside,
    overlap,
    screenshot_path,
    wait_for_client,
    watch_page_errors,
)

from starharness.npc.identity import mint_player_token
from starharness.voyage import PLAYER_ID

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SECRET_ENV = "STAR_HARNESS_TEST_WEB_SCENE_SECRET"
SECRET = "a-player-token-secret-of-forty-characters"
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
    other: box("other-line"),
    mine: box("player-line"),
    speaker: box("npc-speaker"),
    line: box("npc-line"),
    width: window.innerWidth,
    pageWidth: document.documentElement.scrollWidth,
  };
}"""


@pytest_asyncio.fixture(loop_scope="module")
async def two_player_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[RealStack]:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    async with omega_station_for_two(tmp_path, SECRET_ENV) as running:
        yield running


@asynccontextmanager
async def _player_page(
    browser: Browser, stack: RealStack, player_id: str, size: tuple[int, int]
) -> AsyncIterator[tuple[Page, FrameLog]]:
    """A page of `size` of its own (its own browser context) acting as `player_id`, online,
    and the log of every frame it got."""
    width, height = size
    context = await browser.new_context(
        viewport={"width": width, "height": height}, reduced_motion="reduce"
    )
    page = await context.new_page()
    errors = watch_page_errors(page)
    log = FrameLog(page)
    token = mint_player_token(SECRET, player_id)
    try:
        await page.goto(f"{stack.url}?player={player_id}&token={token}")
        await wait_for_client(page)
        await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")
        yield page, log
    finally:
        await context.close()
    assert errors == [], f"the page of {player_id} threw: {errors}"


async def _talk_to_everyone(page: Page, log: FrameLog) -> dict[str, Any]:
    mark = log.mark()
    await page.get_by_test_id("people-group").click()
    await log.until("encounter.idle", mark)
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    return log.frames[mark]


async def _say(page: Page, text: str) -> None:
    await page.get_by_test_id("say-text").fill(text)
    await page.get_by_test_id("say-send").click()


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
    # The turn's lines, top to bottom, each within the scrolling body, none over another.
    lines = [boxes[name] for name in ("other", "mine", "speaker", "line") if boxes[name]]
    assert len(lines) >= 3, boxes
    for line in lines:
        assert inside(line, boxes["body"]), (line, boxes["body"])
    for upper, lower in itertools.pairwise(lines):
        assert upper["bottom"] <= lower["top"] + 1, (upper, lower)


async def _note_is_quiet(page: Page, text: str) -> None:
    """The note `text` shows within the dialogue, below the turn's lines and over none of
    them, apart from any NPC's line and name, and readable."""
    note: dict[str, Any] = await page.get_by_test_id("presence-note").last.evaluate(
        """(el) => ({
          box: el.getBoundingClientRect().toJSON(),
          inLine: Boolean(el.closest('#npc-line, #scene-lines, #npc-speaker, .speaker-name')),
        })"""
    )
    assert not note["inLine"], note
    await page.get_by_test_id("presence-note").last.scroll_into_view_if_needed()
    boxes: dict[str, Any] = await page.evaluate(_BOXES)
    box = await page.get_by_test_id("presence-note").last.evaluate(
        "(el) => el.getBoundingClientRect().toJSON()"
    )
    assert inside(box, boxes["body"]), (box, boxes["body"])
    for name in ("other", "mine", "speaker", "line"):
        if boxes[name]:
            assert boxes[name]["bottom"] <= box["top"] + 1, (name, boxes[name], box)
    samples: list[dict[str, Any]] = await page.evaluate(CONTRAST_JS)
    assert text in " ".join(sample["text"] for sample in samples)
    assert failures(samples) == []


@pytest.mark.parametrize("size", SIZES, ids=["1280x800", "800x600"])
async def test_two_players_share_a_scene_each_sees_the_others_words_under_their_name(
    browser: Browser, two_player_stack: RealStack, tmp_path: Path, size: tuple[int, int]
) -> None:
    stack = two_player_stack
    async with (
        _player_page(browser, stack, PLAYER_ID, size) as (ash, ash_log),
        _player_page(browser, stack, SECOND_CAPTAIN, size) as (birch, birch_log),
    ):
        await ash_log.until("welcome")
        assert ash_log.of("welcome")[0]["revision"] >= 3

        # Ash talks to everyone at the bar and is greeted; Birch's "everyone" joins that scene.
        await _talk_to_everyone(ash, ash_log)
        mark = birch_log.mark()
        opened = await _talk_to_everyone(birch, birch_log)
        assert opened["t"] == "encounter.opened"
        assert [f["t"] for f in birch_log.frames[mark:]] == [
            "encounter.opened",
            "scene.players",
            "encounter.idle",
        ]
        assert len(stack.running.server.open_encounters.shared_scenes) == 1
        # Who is there: a quiet note on each page, never an NPC's line nor under a name.
        await expect(ash.get_by_test_id("presence-note")).to_have_text(["Captain Birch joined"])
        await expect(birch.get_by_test_id("presence-note")).to_have_text(["Captain Ash is here"])
        await _note_is_quiet(ash, "Captain Birch joined")

        # Ash asks Karsk to sell: Birch's page shows Ash's words under Ash's name.
        birch_mark = birch_log.mark()
        await _say(ash, "Karsk, I want to buy 2 medical gel")
        await birch_log.until("encounter.idle", birch_mark)
        other = birch.get_by_test_id("other-line")
        await expect(other).to_be_visible()
        await expect(other).to_have_attribute("data-speaker-id", PLAYER_ID)
        await expect(other.get_by_test_id("other-name")).to_have_text("Captain Ash:")
        await expect(other).to_contain_text("Karsk, I want to buy 2 medical gel")
        # Birch said nothing: no line of his own.
        await expect(birch.get_by_test_id("player-line")).to_be_hidden()

        # Karsk's answer shows on both pages, under his name.
        await expect(ash.get_by_test_id("say-text")).to_be_enabled()
        await expect(birch.get_by_test_id("say-text")).to_be_enabled()
        for page in (ash, birch):
            await expect(page.get_by_test_id("npc-speaker")).to_have_text("Jonah Karsk:")
        answer = await ash.get_by_test_id("npc-line").text_content()
        assert answer and answer.strip()
        await expect(birch.get_by_test_id("npc-line")).to_have_text(answer)

        # The offer is Ash's: his page shows it, Birch's shows no reply at all.
        await expect(ash.locator(".option.is-offer")).to_have_count(1)
        await expect(birch.locator("#options button")).to_have_count(0)
        # Ash's own line is his "You", never his name; Birch's page never says "You" for it.
        await expect(ash.get_by_test_id("player-line")).to_have_text(
            "You, to everyone: Karsk, I want to buy 2 medical gel"
        )
        await expect(ash.get_by_test_id("other-line")).to_be_hidden()

        # Three kinds of line, three looks: another player's name is in neither NPC's colour.
        colours: dict[str, str] = await birch.evaluate(
            """() => ({
              other: getComputedStyle(document.querySelector('[data-testid="other-name"]')).color,
              npc: getComputedStyle(document.querySelector('#npc-speaker .speaker-name')).color,
              otherStyle: getComputedStyle(document.getElementById('other-line')).fontStyle,
              lineStyle: getComputedStyle(document.getElementById('npc-line')).fontStyle,
            })"""
        )
        assert colours["other"] != colours["npc"], colours
        assert colours["otherStyle"] != colours["lineStyle"], colours
        await _no_overlaps(birch)
        # Readable: every text on Birch's page, the other player's mark and name among them.
        samples: list[dict[str, Any]] = await birch.evaluate(CONTRAST_JS)
        assert "Captain Ash:" in " ".join(sample["text"] for sample in samples)
        assert failures(samples) == []
        shot = screenshot_path(f"shared-scene-{size[0]}.png", tmp_path)
        await birch.screenshot(path=str(shot))
        assert_png(shot)
        for test_id in ("other-name", "npc-speaker", "say-send"):
            covered = await birch.get_by_test_id(test_id).evaluate(COVERED_BY)
            assert covered is None, f"{test_id} is covered by {covered}"

        # Birch answers: Ash's page shows it under Birch's name, and Ash's turn moves to history.
        ash_mark = ash_log.mark()
        await _say(birch, "Brandt, what is the news?")
        await ash_log.until("encounter.idle", ash_mark)
        await expect(ash.get_by_test_id("other-name")).to_have_text("Captain Birch:")
        await expect(ash.get_by_test_id("npc-speaker")).to_have_text("Ilse Brandt:")
        await expect(ash.get_by_test_id("player-line")).to_be_hidden()
        # The greeting's turn, then Ash's own (his words and Karsk's answer) in the history.
        await expect(ash.get_by_test_id("history-turn")).to_have_count(2)
        await expect(ash.get_by_test_id("history-turn").last).to_contain_text(
            "You, to everyone: Karsk, I want to buy 2 medical gel"
        )
        await expect(birch.get_by_test_id("player-line")).to_have_text(
            "You, to everyone: Brandt, what is the news?"
        )
        await _no_overlaps(ash)

        # Ash walks away; Birch stays, and still talks to them.
        await ash.get_by_test_id("walk-away").click()
        await expect(ash.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
        await expect(birch.get_by_test_id("presence-note")).to_have_text(["Captain Ash left"])
        await _note_is_quiet(birch, "Captain Ash left")
        mark = birch_log.mark()
        await _say(birch, "Karsk, anything else?")
        await birch_log.until("encounter.idle", mark)
        assert [f for f in birch_log.frames[mark:] if f["t"] == "say.end"]
        await expect(birch.get_by_test_id("dialogue")).to_have_attribute("data-state", "open")


async def test_a_harness_before_revision_3_gets_a_scene_of_the_players_own(
    page: Page, harness: FakeHarness
) -> None:
    # The fake harness's welcome names no revision (1): "everyone" opens a scene, never a join.
    await page.goto(harness.url)
    await wait_for_client(page)
    await page.get_by_test_id("people-group").click()
    opened = await harness.wait_for("encounter.open")
    assert opened["npcIds"] == [SMUGGLER, DOCK_MASTER]
    assert "join" not in opened

"""The client without a mouse: number keys, Enter on focused buttons, typing, Escape."""

from __future__ import annotations

import pytest
from fake_harness import GREETING, OPTIONS, REFUSED, FakeHarness
from playwright.async_api import Page, expect
from web_support import wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_numbers_pick_people_then_replies(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("npc-button-npc-karsk")).to_be_enabled()

    await page.keyboard.press("2")
    opened = await harness.wait_for("encounter.open")
    assert opened["npcId"] == "npc-brandt"  # the second person in the list
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
    # After the turn the keyboard sits on the first reply.
    await expect(page.get_by_test_id("option-1")).to_be_focused()

    await page.keyboard.press("2")
    said = await harness.wait_for("encounter.say")
    assert said == {"t": "encounter.say", "id": opened["id"], "optionId": OPTIONS[1]["id"]}
    await expect(page.get_by_test_id("npc-line")).to_have_text(REFUSED)

    # Digits typed into the text box are text, not reply picks.
    box = page.get_by_test_id("say-text")
    await expect(box).to_be_enabled()
    await box.focus()
    await page.keyboard.type("3 crates of ore?")
    await page.keyboard.press("Enter")
    typed = await harness.wait_for("encounter.say", lambda f: "text" in f)
    assert typed == {"t": "encounter.say", "id": opened["id"], "text": "3 crates of ore?"}
    assert len(harness.frames("encounter.say")) == 2
    await expect(page.get_by_test_id("npc-line")).to_have_text("You said: 3 crates of ore?")

    await page.keyboard.press("Escape")
    closed = await harness.wait_for("encounter.close")
    assert closed == {"t": "encounter.close", "id": opened["id"]}
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    # Walking away hands the keyboard back to the people list.
    await expect(page.get_by_test_id("npc-button-npc-karsk")).to_be_focused()


async def test_enter_on_a_focused_person_and_visible_focus(
    page: Page, harness: FakeHarness
) -> None:
    await page.goto(harness.url)
    brandt = page.get_by_test_id("npc-button-npc-brandt")
    await expect(brandt).to_be_enabled()
    await brandt.focus()
    outline = await brandt.evaluate("(el) => getComputedStyle(el).outlineStyle")
    assert outline not in ("", "none"), "a focused button must show an outline"

    await page.keyboard.press("Enter")
    opened = await harness.wait_for("encounter.open")
    assert opened["npcId"] == "npc-brandt"
    await expect(brandt).to_have_attribute("aria-pressed", "true")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)

    # Walking up to someone else walks away from the first.
    await page.keyboard.press("Escape")
    await page.get_by_test_id("npc-button-npc-karsk").press("Enter")
    second = await harness.wait_for("encounter.open", count=2)
    assert second["npcId"] == "npc-karsk"
    assert second["id"] != opened["id"]
    assert harness.frames("encounter.close") == [{"t": "encounter.close", "id": opened["id"]}]


async def test_input_is_off_while_a_turn_runs(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    await expect(page.get_by_test_id("option-1")).to_be_enabled()

    harness.hold_turns()
    await page.get_by_test_id("option-3").click()
    await expect(page.get_by_test_id("npc-line")).to_contain_text("Suit y")
    for testid in ("option-1", "option-2", "option-3", "say-text", "say-send"):
        await expect(page.get_by_test_id(testid)).to_be_disabled()
    # Keys do nothing while the turn runs: no second say reaches the harness.
    await page.keyboard.press("1")
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("aria-busy", "true")
    harness.release_turns()
    await expect(page.get_by_test_id("option-1")).to_be_enabled()
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("aria-busy", "false")
    # The harness handles frames in order, so a say sent during the turn would come before this.
    await page.keyboard.press("3")
    await harness.wait_for("encounter.say", count=2)
    assert [f.get("optionId") for f in harness.frames("encounter.say")] == [
        "not-today",
        "not-today",
    ]

"""Error frames in plain words: every documented code has a sentence; the rest fall back."""

from __future__ import annotations

import json

import pytest
from fake_harness import GREETING, FakeHarness
from playwright.async_api import Page, expect
from web_support import REPO, wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SCHEMA = REPO / "docs" / "frames.schema.json"


def _schema_codes() -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    codes: list[str] = schema["$defs"]["ErrorCode"]["enum"]
    return codes


async def _friendly(page: Page, code: str, message: str) -> str:
    sentence: str = await page.evaluate(
        "async ([code, message]) => (await import('./js/errors.js')).friendlyError(code, message)",
        [code, message],
    )
    return sentence


async def test_every_schema_error_code_has_words(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await wait_for_client(page)
    await harness.wait_for("hello")  # connected: pushed frames reach the page
    known: list[str] = await page.evaluate(
        "async () => [...(await import('./js/errors.js')).KNOWN_CODES]"
    )
    assert sorted(known) == sorted(_schema_codes())

    problems = page.get_by_test_id("problem")
    for index, code in enumerate(_schema_codes()):
        raw = f"raw message {index} for {code}"
        await harness.push({"t": "error", "code": code, "message": raw})
        shown = problems.last
        await expect(shown).to_have_attribute("data-code", code)
        sentence = await _friendly(page, code, raw)
        assert code not in sentence and raw not in sentence
        await expect(shown.locator(".problem-text")).to_have_text(sentence)
        await expect(shown.locator(".problem-detail")).to_contain_text(raw)
    await expect(problems).to_have_count(3)  # only the latest few stay on screen


async def test_an_unknown_code_shows_the_message(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await harness.wait_for("hello")
    await harness.push({"t": "error", "code": "solar_flare", "message": "The relay is down."})
    shown = page.get_by_test_id("problem")
    await expect(shown).to_have_text("The relay is down.×")
    await shown.get_by_role("button", name="Dismiss").click()
    await expect(shown).to_have_count(0)


async def test_a_refused_open_resets_the_panel(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    opened = await harness.wait_for("encounter.open")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)

    # The harness forgot the encounter (say, it restarted its world): the page lets go too.
    await harness.push(
        {"t": "error", "id": opened["id"], "code": "unknown_encounter", "message": "no such id"}
    )
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-hint")).to_have_text(
        await _friendly(page, "unknown_encounter", "no such id")
    )
    await expect(page.get_by_test_id("npc-button-npc-karsk")).to_have_attribute(
        "aria-pressed", "false"
    )


async def test_a_refused_say_gives_input_back(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    opened = await harness.wait_for("encounter.open")
    await expect(page.get_by_test_id("option-1")).to_be_enabled()
    # An options frame the fake harness does not know: picking it is answered with bad_option
    # and no encounter.idle (no turn started), so the page must re-enable input by itself.
    await harness.push(
        {"t": "options", "id": opened["id"], "items": [{"id": "stale", "label": "Old offer"}]}
    )
    await page.get_by_test_id("option-1").click()
    await expect(page.get_by_test_id("problem")).to_have_attribute("data-code", "bad_option")
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    await expect(page.get_by_test_id("option-1")).to_be_enabled()


async def test_the_same_error_twice_keeps_one_card(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await wait_for_client(page)
    await harness.wait_for("hello")
    problems = page.get_by_test_id("problem")
    frame = {"t": "error", "code": "llm_unavailable", "message": "connect refused"}
    await harness.push(frame)
    await expect(problems).to_have_count(1)
    await harness.push(frame)
    await expect(problems.locator(".problem-text")).to_contain_text("(2×)")
    await expect(problems).to_have_count(1)
    # A different problem still gets its own card.
    await harness.push({"t": "error", "code": "busy", "message": "turn running"})
    await expect(problems).to_have_count(2)

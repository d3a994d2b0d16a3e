"""Degrading without WebGL, and readable contrast for every piece of text on screen."""

from __future__ import annotations

from typing import Any

import pytest
from fake_harness import GREETING, FakeHarness
from playwright.async_api import Page, expect
from web_contrast import CONTRAST_JS, failures
from web_support import launch_chromium, require_chromium, wait_for_client, watch_page_errors

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_text_meets_wcag_aa_contrast(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
    await page.get_by_test_id("option-1").click()
    await expect(page.get_by_test_id("action-ok")).to_be_visible()
    await page.get_by_test_id("option-2").click()
    await expect(page.get_by_test_id("action-refused")).to_be_visible()
    await harness.push({"t": "error", "code": "busy", "message": "a turn is running"})
    await page.get_by_test_id("advance").click()
    await expect(page.get_by_test_id("ticker-item").first).to_be_visible()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()

    samples: list[dict[str, Any]] = await page.evaluate(CONTRAST_JS)
    texts = " ".join(sample["text"] for sample in samples)
    for expected in ("Jonah Karsk", "Refused", "Done", "News", "placeholder"):
        assert expected in texts, f"{expected!r} was not measured"
    assert failures(samples) == []


async def test_without_webgl_the_people_list_still_works(harness: FakeHarness) -> None:
    require_chromium()
    async with launch_chromium(["--disable-3d-apis", "--disable-webgl"]) as browser:
        page = await browser.new_page()
        errors = watch_page_errors(page)
        await page.goto(harness.url)
        await wait_for_client(page)
        assert await page.evaluate("window.starHarness.sceneAvailable") is False
        await expect(page.get_by_test_id("scene-fallback")).to_be_visible()
        await expect(page.get_by_test_id("scene-canvas")).to_have_count(0)

        await page.get_by_test_id("npc-button-npc-karsk").click()
        opened = await harness.wait_for("encounter.open")
        assert opened["npcId"] == "npc-karsk"
        await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
        await page.get_by_test_id("option-1").click()
        await expect(page.get_by_test_id("npc-button-npc-karsk")).to_have_attribute(
            "data-mood", "friendly"
        )
        look = await page.evaluate("window.starHarness.figureLook('npc-karsk')")
        assert look["mood"] == "friendly"
        assert errors == []

"""The client draws the game it is served with: a game made by `new-game` shows its own HUD.

A real server runs the scaffolded tea stall (its own world, actions and offline brain over real
HTTP) with the same web/ as Omega station. The page must show the stall's fields ("Coins",
"Cups") and none of Omega's words or its bar; Omega station keeps its look.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from fake_harness import FakeHarness
from playwright.async_api import Page, expect
from real_stack import RealStack, scaffolded_game
from web_support import wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

MIRA = "npc-mira"
OMEGA_WORDS = (
    "credits",
    "cargo",
    "hold is empty",
    "the bar",
    "omega",
    "your ship",
    " cr",
)
"""Words of Omega station's look that must not reach another game's page (casefolded)."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tea_stall(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RealStack]:
    async with scaffolded_game(tmp_path_factory.mktemp("new-game")) as running:
        yield running


async def _visible_words(page: Page) -> str:
    """Everything the page says, to eyes and to screen readers (text, labels, title)."""
    words: str = await page.evaluate(
        """() => [
          document.title,
          document.body.innerText,
          ...[...document.querySelectorAll("[aria-label]")].map((el) => el.ariaLabel),
          ...[...document.querySelectorAll("input[placeholder]")].map((el) => el.placeholder),
        ].join("\\n")"""
    )
    return words.casefold()


def _assert_no_omega_words(words: str) -> None:
    found = [word for word in OMEGA_WORDS if word in words]
    assert not found, f"Omega station's words on another game's page: {found}\n{words}"


async def test_a_scaffolded_game_shows_its_own_hud_and_no_omega_words(
    page: Page, tea_stall: RealStack
) -> None:
    await page.goto(tea_stall.url)
    await wait_for_client(page)
    hud = page.get_by_test_id("hud")
    await expect(page.get_by_test_id("hud-coins")).to_have_text("20")
    await expect(page.get_by_test_id("hud-cups")).to_have_text("0")
    await expect(hud).to_contain_text(re.compile("coins", re.IGNORECASE))
    await expect(hud).to_contain_text(re.compile("cups", re.IGNORECASE))
    await expect(page.get_by_test_id("hud-location")).to_have_text("the market")
    await expect(page.get_by_test_id("people-list")).to_have_text("1 Mira")
    assert await page.evaluate("() => window.starHarness.place()") != "bar"
    _assert_no_omega_words(await _visible_words(page))

    # Talk, buy a cup through the stall's own offer: the stall's fields move, still no Omega.
    await page.get_by_test_id(f"npc-button-{MIRA}").click()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    # The game's own mood word (the stall declares calm, glad, cross), not one of Omega's.
    await expect(page.get_by_test_id("dialogue-mood")).to_have_text(re.compile("calm|glad|cross"))
    await page.get_by_test_id("say-text").fill("one cup of tea please")
    await page.get_by_test_id("say-send").click()
    offer = page.locator(".option.is-offer").first
    await expect(offer).to_contain_text("tea")
    await expect(offer).to_be_enabled()
    await offer.click()
    await expect(page.get_by_test_id("action-ok")).to_have_count(1)
    await expect(page.get_by_test_id("hud-cups")).not_to_have_text("0")
    assert int(await page.get_by_test_id("hud-coins").inner_text()) < 20
    await expect(page.get_by_test_id("hud-attitude")).to_contain_text("Mira: +")
    _assert_no_omega_words(await _visible_words(page))


async def test_omega_station_keeps_its_look(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("hud-credits")).to_have_text("12,000 cr")
    await expect(page.get_by_test_id("hud-cargo")).to_have_text("Hold is empty")
    hud = page.get_by_test_id("hud")
    await expect(hud).to_contain_text(re.compile("credits", re.IGNORECASE))
    await expect(hud).to_contain_text(re.compile("cargo", re.IGNORECASE))
    if await page.evaluate("() => window.starHarness.sceneAvailable"):
        assert await page.evaluate("() => window.starHarness.place()") == "bar"
    await expect(page).to_have_title("Omega station · star-harness")
    # Omega's scale (-100..100) when no schema says otherwise: +10 is still neutral.
    assert await page.evaluate("() => window.starHarness.attitudeWord(10)") == "neutral"


async def test_attitudes_are_worded_on_the_game_s_own_scale(
    page: Page, tea_stall: RealStack
) -> None:
    """The stall's attitudes run from -10 to 10 (its schema, served at /frames.schema.json):
    +10 is as friendly as it gets there, where on Omega's -100..100 it would be neutral."""
    schema = await page.request.get(f"{tea_stall.url}frames.schema.json")
    assert schema.ok
    declared = (await schema.json())["$defs"]["Attitude"]
    assert (declared["minimum"], declared["maximum"]) == (-10, 10)
    await page.goto(tea_stall.url)
    await wait_for_client(page)
    await page.wait_for_function("() => window.starHarness.attitudeWord(10) === 'friendly'")
    words = await page.evaluate("() => [-10, -3, 0, 3, 10].map(window.starHarness.attitudeWord)")
    assert words == ["hostile", "cool", "neutral", "warm", "friendly"]

"""Offers in the browser: an option the NPC proposes shows what the player gives and an Accept
mark, reads at every window size, and picking it (click or key) sends its id; the HUD follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_harness import GEL_MOVED, GEL_PITCH, GEL_SOLD, GEL_TEXT, OFFER, FakeHarness
from playwright.async_api import Page, expect
from real_stack import RealStack
from test_web_e2e import FrameLog
from web_contrast import CONTRAST_JS, failures
from web_support import assert_png, inside, screenshot_path, wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SIZES = [(1280, 800), (800, 600), (390, 844), (360, 740)]
"""Desktop, a small window, a phone held upright, and a small phone (Accept under the terms)."""
PICTURED = SIZES[:3]
"""The sizes whose screenshots the docs keep."""
SMUGGLER = "npc-karsk"

_BOXES = """(button) => {
  const box = (el) => el.getBoundingClientRect().toJSON();
  const part = (id) => box(button.querySelector(`[data-testid="${id}"]`));
  const r = box(button);
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {
    button: r,
    label: part("offer-label"),
    cost: part("offer-cost"),
    accept: part("offer-accept"),
    covered: hit === button || button.contains(hit) ? null : String(hit && hit.outerHTML),
    width: window.innerWidth,
    pageWidth: document.documentElement.scrollWidth,
  };
}"""


async def _ask_for_gel(page: Page, harness: FakeHarness) -> dict[str, Any]:
    """Walk up to Karsk and ask for gel: his answer carries the offer as reply 1."""
    await page.goto(harness.url)
    await wait_for_client(page)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    opened = await harness.wait_for("encounter.open")
    box = page.get_by_test_id("say-text")
    await expect(box).to_be_enabled()
    await box.fill(GEL_TEXT)
    await box.press("Enter")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GEL_PITCH)
    await expect(page.get_by_test_id("option-1")).to_be_enabled()
    return opened


@pytest.mark.parametrize("sized_page", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_an_offer_shows_its_cost_and_commits_on_click(
    sized_page: Page, harness: FakeHarness, tmp_path: Path
) -> None:
    page = sized_page
    viewport = page.viewport_size or {"width": 0, "height": 0}
    size = f"{viewport['width']}x{viewport['height']}"
    opened = await _ask_for_gel(page, harness)

    offer = page.get_by_test_id("option-1")
    await expect(offer).to_have_class("option is-offer")
    await expect(offer).to_have_attribute("data-offer-action", "player_buys")
    await expect(offer.get_by_test_id("offer-label")).to_have_text(OFFER["label"])
    await expect(offer.get_by_test_id("offer-cost")).to_have_text("You give 3,300 cr")
    await expect(offer.get_by_test_id("offer-accept")).to_have_text("Accept")
    await expect(offer).to_have_accessible_name("Accept offer 1: Buy 3 medical gel, for 3,300 cr")
    # The other replies stay plain replies.
    await expect(page.get_by_test_id("option-2")).to_have_class("option")
    await expect(page.get_by_test_id("option-2")).to_have_text("2 Too steep for me.")

    await offer.scroll_into_view_if_needed()
    await expect(offer).to_be_in_viewport()
    g: dict[str, Any] = await offer.evaluate(_BOXES)
    assert g["covered"] is None, f"the offer is covered at {size}: {g['covered']}"
    for part in ("label", "cost", "accept"):
        assert inside(g[part], g["button"]), f"the offer's {part} spills out at {size}: {g}"
    assert g["pageWidth"] <= g["width"], f"the page scrolls sideways at {size}"
    if g["accept"]["top"] >= g["label"]["bottom"]:
        assert viewport["width"] < 384, f"the Accept mark left the terms' row at {size}"
    name = f"offer-{size}.png"
    pictured = (viewport["width"], viewport["height"]) in PICTURED
    shot = screenshot_path(name, tmp_path) if pictured else tmp_path / name
    await page.screenshot(path=str(shot), animations="disabled")
    assert_png(shot)

    await expect(page.get_by_test_id("hud-credits")).to_have_text("12,000 cr")
    await offer.click()
    said = await harness.wait_for("encounter.say", lambda f: "optionId" in f)
    assert said == {"t": "encounter.say", "id": opened["id"], "optionId": OFFER["id"]}
    await expect(page.get_by_test_id("player-line")).to_have_text(
        "You: I accept: Buy 3 medical gel (3,300 cr)"
    )
    await expect(page.get_by_test_id("action-ok")).to_contain_text(
        "Sold 3 medical gel for 3,300 credits."
    )
    await expect(page.get_by_test_id("hud-credits")).to_have_text("8,700 cr")
    await expect(page.get_by_test_id("hud-cargo")).to_contain_text("medical gel")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GEL_SOLD)
    # The accepted offer is gone with the options that carried it.
    await expect(page.locator(".is-offer")).to_have_count(0)


async def test_an_offers_text_meets_wcag_aa_contrast(page: Page, harness: FakeHarness) -> None:
    await _ask_for_gel(page, harness)
    await page.get_by_test_id("npc-line").click()  # no focus ring or hover on the offer
    samples: list[dict[str, Any]] = await page.evaluate(CONTRAST_JS)
    texts = [sample["text"] for sample in samples]
    for expected in ("Offer", "Buy 3 medical gel", "You give", "3,300 cr", "Accept"):
        assert expected in texts, f"{expected!r} was not measured"
    assert failures(samples) == []


async def test_an_offer_is_accepted_from_the_keyboard(page: Page, harness: FakeHarness) -> None:
    await _ask_for_gel(page, harness)
    # After the turn the keyboard sits on the offer, the first reply; Enter accepts it.
    await expect(page.get_by_test_id("option-1")).to_be_focused()
    outline = await page.get_by_test_id("option-1").evaluate(
        "(el) => getComputedStyle(el).outlineStyle"
    )
    assert outline not in ("", "none"), "a focused offer must show an outline"
    await page.keyboard.press("Enter")
    said = await harness.wait_for("encounter.say", lambda f: "optionId" in f)
    assert said["optionId"] == OFFER["id"]
    await expect(page.get_by_test_id("hud-credits")).to_have_text("8,700 cr")


async def test_an_offer_is_accepted_by_its_number(page: Page, harness: FakeHarness) -> None:
    await _ask_for_gel(page, harness)
    await page.get_by_test_id("npc-line").click()  # the keyboard is nowhere in particular
    await page.keyboard.press("1")
    said = await harness.wait_for("encounter.say", lambda f: "optionId" in f)
    assert said["optionId"] == OFFER["id"]
    await expect(page.get_by_test_id("action-ok")).to_be_visible()


async def test_a_refused_offer_shows_why_and_changes_nothing(
    page: Page, harness: FakeHarness
) -> None:
    harness.gel_price_moved = True
    await _ask_for_gel(page, harness)
    await page.get_by_test_id("option-1").click()
    refused = page.get_by_test_id("action-refused")
    await expect(refused).to_contain_text("The price moved")
    await expect(page.get_by_test_id("npc-line")).to_have_text(GEL_MOVED)
    await expect(page.get_by_test_id("hud-credits")).to_have_text("12,000 cr")
    # The NPC offers again; the new offer can be picked like the first.
    await expect(page.get_by_test_id("option-1")).to_have_class("option is-offer")
    await expect(page.get_by_test_id("option-1")).to_be_enabled()


async def test_input_is_off_while_an_accepted_offer_commits(
    page: Page, harness: FakeHarness
) -> None:
    await _ask_for_gel(page, harness)
    harness.hold_turns()
    await page.get_by_test_id("option-1").click()
    await expect(page.get_by_test_id("npc-line")).to_contain_text(GEL_SOLD[:6])
    await expect(page.get_by_test_id("option-1")).to_be_disabled()
    # A second press cannot send the offer again while the turn runs.
    await page.keyboard.press("1")
    harness.release_turns()
    await expect(page.get_by_test_id("npc-line")).to_have_text(GEL_SOLD)
    await expect(page.get_by_test_id("option-1")).to_be_enabled()
    picks = [f for f in harness.frames("encounter.say") if "optionId" in f]
    assert [f["optionId"] for f in picks] == [OFFER["id"]]


@pytest.mark.parametrize(
    "sized_page", [(1280, 800), (800, 600)], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}"
)
async def test_the_real_servers_offer_shows_its_price_and_commits_on_click(
    sized_page: Page, stack: RealStack
) -> None:
    """Omega station and its offline brain: walking up commits nothing, accepting commits once."""
    page = sized_page
    log = FrameLog(page)
    await page.goto(stack.url)
    await wait_for_client(page)
    welcome = await log.until("welcome")
    credits: int = welcome["hud"]["credits"]

    mark = log.mark()
    await page.get_by_test_id(f"npc-button-{SMUGGLER}").click()
    await log.until("encounter.idle", mark)
    assert not log.since(mark, "action"), "walking up to him acted"
    items: list[dict[str, Any]] = log.since(mark, "options")[-1]["items"]
    number, item = next((n, i) for n, i in enumerate(items, 1) if "offer" in i)
    offer = page.get_by_test_id(f"option-{number}")
    await expect(offer).to_have_class("option is-offer")
    await expect(offer.get_by_test_id("offer-label")).to_have_text(item["label"])
    await expect(offer.get_by_test_id("offer-cost")).to_have_text(
        f"You give {item['offer']['cost']}"
    )
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{credits:,} cr")

    mark = log.mark()
    await offer.click()
    await log.until("encounter.idle", mark)
    turn = log.frames[mark:]
    assert turn[0]["t"] == "action" and turn[0]["ok"], f"accepting did not commit first: {turn}"
    assert [f["t"] for f in turn].count("action") == 1, f"more than one action: {turn}"
    hud = next(f for f in turn if f["t"] == "hud")
    assert hud["data"]["credits"] != credits, "the offer changed no credits"
    await expect(page.get_by_test_id("action-ok")).to_contain_text(turn[0]["summary"])
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{hud['data']['credits']:,} cr")


async def test_an_offer_without_a_cost_shows_no_cost_line(page: Page, harness: FakeHarness) -> None:
    opened = await _ask_for_gel(page, harness)
    map_offer = {"id": "offer-2", "label": "Take the map", "offer": {"action": "swap", "cost": ""}}
    plain = {"id": "no", "label": "No thanks"}
    await harness.push({"t": "options", "id": opened["id"], "items": [plain, map_offer]})
    offer = page.get_by_test_id("option-2")
    await expect(offer).to_have_class("option is-offer")
    await expect(offer).to_have_accessible_name("Accept offer 2: Take the map")
    await expect(offer.get_by_test_id("offer-cost")).to_have_count(0)
    await expect(offer.get_by_test_id("offer-accept")).to_be_visible()
    await expect(page.get_by_test_id("option-1")).to_have_class("option")

"""The browser client against a fake harness: click, stream, trade, refuse, fail, news."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fake_harness import (
    FAILING_TEXT,
    FUEL_PRICE,
    GOOD_CUSTOMER,
    GREETING,
    ODD_MOOD_TEXT,
    OPTIONS,
    REFUSED,
    SOLD,
    FakeHarness,
)
from playwright.async_api import Page, Request, expect
from web_support import assert_png, figure_look, figure_point, screenshot_path, wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_talk_trade_refusal_error_and_news(
    moving_page: Page, harness: FakeHarness, tmp_path: Path
) -> None:
    page = moving_page
    requests: list[str] = []

    def remember(request: Request) -> None:
        requests.append(request.url)

    page.on("request", remember)
    await page.goto(harness.url)
    await wait_for_client(page)
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")
    hello = await harness.wait_for("hello")
    assert hello["playerId"] == "player-1"

    # The two NPCs at the player's location stand in the bar; Vex is elsewhere.
    people = page.get_by_test_id("people-list").get_by_role("button")
    await expect(people).to_have_count(2)
    await expect(people.nth(0)).to_contain_text("Jonah Karsk")
    await expect(page.get_by_test_id("people-elsewhere")).to_contain_text("Vex")
    await expect(page.get_by_test_id("figure-label-npc-karsk")).to_contain_text("Jonah Karsk")
    await expect(page.get_by_test_id("hud-credits")).to_have_text("12,000 cr")
    await expect(page.get_by_test_id("hud-location")).to_have_text("Omega station")
    assert await page.evaluate("window.starHarness.sceneAvailable") is True

    # Click the smuggler's figure in the 3D scene: the raycast picks him.
    harness.hold_turns()
    point = await figure_point(page, "npc-karsk")
    await page.mouse.click(point["x"], point["y"])
    opened = await harness.wait_for("encounter.open")
    assert opened["npcId"] == "npc-karsk"
    assert opened["playerId"] == "player-1"
    assert opened["id"]

    # Half the greeting has streamed and the turn is held: the line shows, input is off.
    line = page.get_by_test_id("npc-line")
    await expect(line).to_contain_text(GREETING[:12])
    await expect(line).not_to_contain_text(GREETING)
    await expect(page.get_by_test_id("dialogue-npc")).to_have_text("Jonah Karsk")
    await expect(page.get_by_test_id("hud-attitude")).to_contain_text("Jonah Karsk: 0")
    await expect(page.get_by_test_id("say-text")).to_be_disabled()
    await expect(page.get_by_test_id("say-send")).to_be_disabled()
    harness.release_turns()
    await expect(line).to_have_text(GREETING)
    options = page.get_by_test_id("options").get_by_role("button")
    await expect(options).to_have_count(len(OPTIONS))
    await expect(options.nth(0)).to_be_enabled()
    await expect(page.get_by_test_id("say-text")).to_be_enabled()
    neutral = await figure_look(page, "npc-karsk")
    assert neutral["mood"] == "neutral"

    # Buy: the action card is green, the HUD credits and cargo change, the mood turns friendly.
    await options.nth(0).click()
    bought = await harness.wait_for("encounter.say")
    assert bought == {"t": "encounter.say", "id": opened["id"], "optionId": OPTIONS[0]["id"]}
    await expect(line).to_have_text(SOLD)
    await expect(page.get_by_test_id("player-line")).to_contain_text(OPTIONS[0]["label"])
    await expect(page.get_by_test_id("action-ok")).to_contain_text("sells you 2 fuel cells")
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{12_000 - FUEL_PRICE:,} cr")
    await expect(page.get_by_test_id("hud-cargo")).to_contain_text("2 × fuel cells")
    # The hud frame after the sale carries his new attitude; the HUD follows mid-encounter.
    await expect(page.get_by_test_id("hud-attitude")).to_have_text(
        f"Jonah Karsk: +{GOOD_CUSTOMER} (warm)"
    )
    await expect(page.get_by_test_id("dialogue-mood")).to_have_attribute("data-mood", "friendly")
    friendly = await figure_look(page, "npc-karsk")
    assert friendly["mood"] == "friendly"
    assert friendly["colour"] != neutral["colour"]
    await expect(page.get_by_test_id("npc-button-npc-karsk")).to_have_attribute(
        "data-mood", "friendly"
    )

    # Something unaffordable: refused (amber card with the reason), nothing bought.
    await options.nth(1).click()
    await expect(line).to_have_text(REFUSED)
    refused = page.get_by_test_id("action-refused")
    await expect(refused).to_contain_text("Refused")
    await expect(refused).to_contain_text("the freighter costs 90,000 cr")
    await expect(page.get_by_test_id("hud-credits")).to_have_text(f"{12_000 - FUEL_PRICE:,} cr")
    annoyed = await figure_look(page, "npc-karsk")
    assert annoyed["mood"] == "annoyed"
    assert annoyed["colour"] not in (neutral["colour"], friendly["colour"])

    # A model outage arrives as an error frame: shown in plain words, input comes back.
    await page.get_by_test_id("say-text").fill(FAILING_TEXT)
    await page.get_by_test_id("say-text").press("Enter")
    said = await harness.wait_for("encounter.say", lambda f: "text" in f)
    assert said == {"t": "encounter.say", "id": opened["id"], "text": FAILING_TEXT}
    problem = page.get_by_test_id("problem")
    await expect(problem).to_contain_text("could not be reached")
    await expect(problem).to_have_attribute("data-code", "llm_unavailable")
    await expect(page.get_by_test_id("say-text")).to_be_enabled()

    # Advance five days: the ticker shows the headlines, the HUD the new day.
    await page.get_by_test_id("advance").click()
    tick = await harness.wait_for("world.tick")
    assert tick == {"t": "world.tick", "days": 5}
    ticker = page.get_by_test_id("ticker")
    await expect(ticker).to_contain_text("Day 6: fuel prices climb on the ring.")
    await expect(ticker).to_contain_text("Pirates raid a convoy")
    await expect(ticker).to_contain_text("Omega station")
    await expect(page.get_by_test_id("hud-day")).to_have_text("6")

    shot = screenshot_path("browser-client-fake.png", tmp_path)
    await page.screenshot(path=str(shot), animations="disabled")
    assert_png(shot)

    # Walk away: the encounter closes and the panel resets.
    await page.get_by_test_id("walk-away").click()
    closed = await harness.wait_for("encounter.close")
    assert closed == {"t": "encounter.close", "id": opened["id"]}
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("hud-attitude")).to_have_text("Not talking to anyone")

    # Everything came from this server: three.js is vendored, nothing went to the internet.
    hosts = {urlsplit(url).netloc for url in requests}
    assert hosts == {f"127.0.0.1:{harness.port}"}
    assert any(url.endswith("/vendor/three/three.module.js") for url in requests)


async def test_a_click_before_the_first_frame_still_picks_the_figure(
    page: Page, harness: FakeHarness
) -> None:
    """A player who clicks the instant the bar fills hits the figure, not its old place.

    The software renderer draws at most eight frames a second, so a click can land between
    placing a figure and drawing it. The click here is dispatched from the same task that
    fills the people list, before any frame can run.
    """
    await page.add_init_script(
        """
        new MutationObserver((_, observer) => {
          const list = document.querySelector('[data-testid="people-list"]');
          if (!list || !list.querySelector("button") || !window.starHarness) return;
          observer.disconnect();
          const point = window.starHarness.figurePoint("npc-karsk");
          const canvas = document.querySelector('[data-testid="scene-canvas"]');
          canvas.dispatchEvent(new MouseEvent("click", {
            bubbles: true, clientX: point.x, clientY: point.y,
          }));
        }).observe(document, { childList: true, subtree: true });
        """
    )
    await page.goto(harness.url)
    opened = await harness.wait_for("encounter.open")
    assert opened["npcId"] == "npc-karsk"
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "open")


async def test_unknown_mood_looks_neutral(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    await page.get_by_test_id("npc-button-npc-karsk").click()
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)
    neutral = await figure_look(page, "npc-karsk")
    await page.get_by_test_id("options").get_by_role("button").nth(0).click()
    await expect(page.get_by_test_id("dialogue-mood")).to_have_attribute("data-mood", "friendly")

    await page.get_by_test_id("say-text").fill(ODD_MOOD_TEXT)
    await page.get_by_test_id("say-send").click()
    await expect(page.get_by_test_id("npc-line")).to_have_text(f"You said: {ODD_MOOD_TEXT}")
    await expect(page.get_by_test_id("dialogue-mood")).to_have_attribute("data-mood", "bemused")
    odd = await figure_look(page, "npc-karsk")
    assert odd["mood"] == "neutral"
    assert odd["colour"] == neutral["colour"]


async def test_reconnects_after_the_server_restarts(page: Page, harness: FakeHarness) -> None:
    await page.goto(harness.url)
    status = page.get_by_test_id("status")
    await expect(status).to_have_attribute("data-state", "online")
    await page.get_by_test_id("npc-button-npc-brandt").click()
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)

    await harness.stop()
    await expect(status).to_have_attribute("data-state", "offline")
    await expect(status).to_contain_text("reconnecting")
    await expect(page.get_by_test_id("dialogue")).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-hint")).to_contain_text("connection dropped")
    await expect(page.get_by_test_id("npc-button-npc-brandt")).to_be_disabled()
    await expect(page.get_by_test_id("advance")).to_be_disabled()

    await harness.start()
    await expect(status).to_have_attribute("data-state", "online")
    await harness.wait_for("hello", count=2)
    await expect(page.get_by_test_id("npc-button-npc-brandt")).to_be_enabled()
    await page.get_by_test_id("npc-button-npc-brandt").click()
    reopened = await harness.wait_for("encounter.open", count=2)
    assert reopened["npcId"] == "npc-brandt"
    await expect(page.get_by_test_id("npc-line")).to_have_text(GREETING)


async def test_player_and_token_come_from_the_page_address(
    page: Page, harness: FakeHarness
) -> None:
    # Playwright reports the socket to Python asynchronously, so the server may see the
    # hello first; wait for the event itself instead of reading a list filled by a listener.
    async with page.expect_websocket() as socket_info:
        await page.goto(f"{harness.url}?player=player-7&token=s3cret")
    socket = await socket_info.value
    assert socket.url == f"ws://127.0.0.1:{harness.port}/gh?token=s3cret"
    hello = await harness.wait_for("hello")
    assert hello["playerId"] == "player-7"
    await page.get_by_test_id("npc-button-npc-karsk").click()
    opened = await harness.wait_for("encounter.open")
    assert opened["playerId"] == "player-7"

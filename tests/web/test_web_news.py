"""The news ticker against the real server: headlines name no place twice, a reload keeps them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect
from real_stack import RealStack, omega_station
from test_web_e2e import FrameLog
from web_support import wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module")
async def stack(tmp_path: Path) -> AsyncIterator[RealStack]:
    async with omega_station(tmp_path) as running:
        yield running


async def test_the_ticker_survives_a_reload(page: Page, stack: RealStack) -> None:
    log = FrameLog(page)
    await page.goto(stack.url)
    await wait_for_client(page)
    await log.until("welcome")
    ticker = page.get_by_test_id("ticker")
    await expect(ticker).to_contain_text("No news yet.")
    events: list[dict[str, str]] = []
    while not events:
        mark = log.mark()
        await page.get_by_test_id("advance").click()
        await log.until("hud", mark)
        events = log.since(mark, "world.event")
    places = await _place_names(stack)
    for event in events:
        # The ticker shows the place beside the headline; the headline need not say it again.
        assert not any(place in event["headline"] for place in places), event

    await page.reload()
    await wait_for_client(page)
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "online")
    await expect(ticker).not_to_contain_text("No news yet.")
    for event in events[-3:]:
        await expect(ticker).to_contain_text(event["headline"])
    items = page.get_by_test_id("ticker-item")
    await expect(items.first).to_contain_text(events[-1]["headline"])  # newest first


async def _place_names(stack: RealStack) -> set[str]:
    def read() -> set[str]:
        with stack.world.snapshot() as reader:
            return {location.name for location in reader.locations()}

    return await asyncio.to_thread(read)

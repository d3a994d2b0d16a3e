"""Picking "Leave" ends the conversation: the farewell is heard, then the page closes it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, WebSocket, expect
from real_stack import RealStack, omega_station
from test_web_e2e import FrameLog
from web_support import wait_for_client

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module")
async def stack(tmp_path: Path) -> AsyncIterator[RealStack]:
    async with omega_station(tmp_path) as running:
        yield running


async def test_leave_hears_the_farewell_and_closes(page: Page, stack: RealStack) -> None:
    sent: list[dict[str, Any]] = []

    def watch(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

    page.on("websocket", watch)
    log = FrameLog(page)
    visits_before = await _visits(stack)
    await page.goto(stack.url)
    await wait_for_client(page)
    mark = log.mark()
    await page.get_by_test_id("npc-button-npc-karsk").click()
    await log.until("encounter.idle", mark)
    items = log.since(mark, "options")[-1]["items"]
    number = next(n for n, item in enumerate(items, 1) if item["id"] == "bye")
    assert items[number - 1]["label"] == "Leave"

    mark = log.mark()
    await page.get_by_test_id(f"option-{number}").click()
    await log.until("encounter.idle", mark)
    farewell = "".join(f["text"] for f in log.frames[mark:] if f["t"] == "say.delta")
    assert farewell
    dialogue = page.get_by_test_id("dialogue")
    await expect(dialogue).to_have_attribute("data-state", "closed")
    await expect(page.get_by_test_id("dialogue-hint")).to_contain_text(farewell)
    # The server closed it: the visit is recorded when an encounter ends, not before.
    async with asyncio.timeout(15):
        while await _visits(stack) == visits_before:  # noqa: ASYNC110 (the world has no event)
            await asyncio.sleep(0.05)
    opened = next(f for f in sent if f["t"] == "encounter.open")
    assert {"t": "encounter.close", "id": opened["id"]} in sent
    assert log.since(mark, "error") == []


async def _visits(stack: RealStack) -> int:
    def count() -> int:
        with stack.world.snapshot() as reader:
            return len([m for m in reader.memories("npc-karsk", "player-1") if m.kind == "visit"])

    return await asyncio.to_thread(count)

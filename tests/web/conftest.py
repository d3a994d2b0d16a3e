"""Fixtures for the browser client tests: the system Chromium through Playwright, a fake harness."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import pytest
import pytest_asyncio
from fake_harness import FakeHarness
from playwright.async_api import Browser, Page, expect
from real_stack import RealStack, omega_station
from web_support import launch_chromium, require_chromium, watch_page_errors

expect.set_options(timeout=15_000)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    """One Chromium per test module (each test gets its own context)."""
    require_chromium()
    async with launch_chromium() as launched:
        yield launched


@pytest_asyncio.fixture(loop_scope="module")
async def harness() -> AsyncIterator[FakeHarness]:
    fake = FakeHarness()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@asynccontextmanager
async def _page(
    browser: Browser,
    motion: Literal["reduce", "no-preference"],
    size: tuple[int, int] = (1280, 800),
) -> AsyncIterator[Page]:
    width, height = size
    context = await browser.new_context(
        viewport={"width": width, "height": height}, reduced_motion=motion
    )
    opened = await context.new_page()
    errors = watch_page_errors(opened)
    try:
        yield opened
    finally:
        await context.close()
    assert errors == [], f"the page threw: {errors}"


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A page that prefers reduced motion: lines show at once, figures stand still (faster)."""
    async with _page(browser, "reduce") as opened:
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def moving_page(browser: Browser) -> AsyncIterator[Page]:
    """A page with motion: lines type out, the speaking figure moves."""
    async with _page(browser, "no-preference") as opened:
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def sized_page(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    """A reduced-motion page of the (width, height) the test parametrizes (indirect=True)."""
    async with _page(browser, "reduce", request.param) as opened:
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def stack(tmp_path: Path) -> AsyncIterator[RealStack]:
    """Omega station served for real (the offline brain) with its browser client."""
    async with omega_station(tmp_path) as running:
        yield running

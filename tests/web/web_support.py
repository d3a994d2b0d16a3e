"""Helpers for the browser tests: finding and launching Chromium, reading the page's state."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    # WebGL falls back to SwiftShader without a GPU; newer Chromium wants this said out loud.
    "--enable-unsafe-swiftshader",
)
REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO / "docs" / "img"
UPDATE_SCREENSHOTS = "STAR_HARNESS_UPDATE_SCREENSHOTS"


def screenshot_path(name: str, scratch: Path) -> Path:
    """Where a test saves its screenshot: docs/img when asked to update them, else `scratch`.

    Every run renders slightly different bytes, so the docs' pictures change only on purpose.
    """
    folder = IMAGES if os.environ.get(UPDATE_SCREENSHOTS) == "1" else scratch
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def assert_png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"


def require_chromium() -> None:
    """Skip when there is no system Chromium, except under CI=true where that is a failure."""
    if CHROMIUM.exists():
        return
    reason = f"no system Chromium at {CHROMIUM} (install the 'chromium' package)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@asynccontextmanager
async def launch_chromium(extra_args: Sequence[str] = ()) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args]
        )
        try:
            yield browser
        finally:
            await browser.close()


def inside(inner: dict[str, Any], outer: dict[str, Any]) -> bool:
    """Whether the box `inner` lies within `outer` (page pixels, half a pixel of slack)."""
    return (
        inner["left"] >= outer["left"] - 0.5
        and inner["right"] <= outer["right"] + 0.5
        and inner["top"] >= outer["top"] - 0.5
        and inner["bottom"] <= outer["bottom"] + 0.5
    )


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether the boxes `a` and `b` share more than half a pixel each way."""
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


def watch_page_errors(page: Page) -> list[str]:
    """Collect uncaught exceptions thrown in the page (a test ends by asserting none came)."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


async def figure_point(page: Page, npc_id: str) -> dict[str, float]:
    """Where the NPC's figure is drawn, in page pixels, as the 3D scene projects it."""
    point: dict[str, float] | None = await page.evaluate(
        "(id) => window.starHarness.figurePoint(id)", npc_id
    )
    assert point is not None, f"no figure drawn for {npc_id}"
    return point


async def figure_look(page: Page, npc_id: str) -> dict[str, Any]:
    look: dict[str, Any] = await page.evaluate("(id) => window.starHarness.figureLook(id)", npc_id)
    return look


async def wait_for_client(page: Page) -> None:
    """Until main.js has started (it sets window.starHarness once the scene is built)."""
    await page.wait_for_function("() => window.starHarness !== undefined")


COVERED_BY = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit === el || el.contains(hit) ? null : (hit ? hit.outerHTML.slice(0, 80) : "nothing");
}"""
"""What covers the middle of an element (`el.evaluate(COVERED_BY)`), or null when nothing."""

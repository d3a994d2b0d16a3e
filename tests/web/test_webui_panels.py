"""The web UI's other tabs in a real Chromium: an NPC encounter transcript request by request,
and the Godot panel against the fake addon (a paired editor, a play error, the check button)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import expect
from web_support import launch_chromium, require_chromium, screenshot_path, watch_page_errors
from webui_support import free_port, record_encounter, web_stack

from session_protocol_support import mock_rows
from starharness.godot import GODOT_BRIDGE
from starharness.godot.testing import FakeAddon
from starharness.mockllm import MockLlmServer

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

PLAY_ERROR = "res://player.gd:7 - Invalid call. Nonexistent function 'jump'"


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    return home


async def test_transcripts_and_the_godot_panel(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    require_chromium()
    (tmp_path / "npc").mkdir()
    await record_encounter(home, tmp_path / "npc")
    project = tmp_path / "game"
    project.mkdir()
    (project / "project.godot").write_text("[application]\n", encoding="utf-8")
    rows = [
        *mock_rows(mock.base_url, None),
        {"id": "godot", "merge": {"base_port": free_port(), "port_span": 1}},
    ]
    async with (
        web_stack("godot", rows, tmp_path, project=project) as stack,
        launch_chromium() as browser,
    ):
        bridge = stack.runtime.ctx.get(GODOT_BRIDGE)
        fake = await FakeAddon.from_endpoint(
            bridge.settings.endpoint_file, project_path=str(project)
        )
        await fake.connect()
        try:
            assert await bridge.wait_for_editors(1, timeout_s=10)
            await fake.play_error(PLAY_ERROR)
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            errors = watch_page_errors(page)
            await page.goto(stack.url)
            await expect(page.locator("body[data-ready=true]")).to_be_attached()

            # The NPC transcript, request by request.
            await page.get_by_role("tab", name="NPC transcripts").click()
            entry = page.locator("[data-transcript]")
            await expect(entry).to_have_count(1)
            await expect(entry).to_contain_text("with p1")
            await entry.click()
            requests = page.locator("details.request")
            await expect(requests).to_have_count(3)
            first = requests.first
            await expect(first).to_have_attribute("open", "")
            await expect(first.locator(".messages-sent")).to_contain_text("Hello there")
            await expect(requests.nth(2).locator("summary")).to_contain_text("request 3")
            await requests.nth(2).locator("summary").click()
            await expect(requests.nth(2).locator(".messages-sent")).to_contain_text("buy 1")
            await page.locator("#transcript").evaluate("(node) => node.scrollTo(0, 0)")
            await page.screenshot(path=str(screenshot_path("webui-transcript.png", tmp_path)))

            # The Godot panel: listening, the paired editor and its project, the play error.
            await page.get_by_role("tab", name="Godot").click()
            await expect(page.locator("[data-bridge=listening]")).to_be_visible()
            editor = page.locator("[data-editor] .project")
            await expect(editor).to_have_text(str(project))
            await expect(page.locator("#play-errors .play-error")).to_contain_text(PLAY_ERROR)
            await page.click("#godot-check")
            check = page.locator("#check-result")
            await expect(check).to_contain_text("godotVersion")
            await expect(check).to_contain_text(str(project))
            await expect(page.locator("#tab-godot")).not_to_contain_text("null")
            await page.screenshot(path=str(screenshot_path("webui-godot.png", tmp_path)))
            assert any(r.get("method") == "get_editor_info" for r in fake.requests)
            assert errors == []
        finally:
            await fake.close()

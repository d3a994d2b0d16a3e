"""The web UI in a real Chromium: a streamed chat with an approved tool call, resumed after a
reload; the Host allow-list refuses a rebound name."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.async_api import Page, expect
from web_support import launch_chromium, require_chromium, screenshot_path, watch_page_errors
from webui_support import web_stack

from raw_http_support import raw_status
from session_protocol_support import call, mock_rows, say
from starharness.mockllm import MockLlmServer
from starharness.webui import WebSettings

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


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


async def _ready(page: Page, url: str) -> None:
    await page.goto(url)
    await expect(page.locator("body[data-ready=true]")).to_be_attached()


async def test_chat_streams_approves_a_tool_and_resumes_after_reload(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    require_chromium()
    project = tmp_path / "project"
    project.mkdir()
    mock.script_next(
        [
            call("write_file", {"path": "hello.txt", "content": "from the web"}),
            {"behaviour": "reasoning_success", "reasoning": "It is written.", "text": "Wrote it."},
        ]
    )
    async with (
        web_stack("task", mock_rows(mock.base_url, project), tmp_path) as stack,
        launch_chromium() as browser,
    ):
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        errors = watch_page_errors(page)
        await _ready(page, stack.url)
        await expect(page.locator("#connection")).to_have_text("connected")

        await page.click("#new-chat")
        await expect(page.locator("#session-title")).to_contain_text("web-")
        await page.fill("#prompt", "please write hello.txt")
        await page.press("#prompt", "Enter")

        approval = page.locator(".approval[data-approval]")
        await expect(approval).to_contain_text("write_file")
        await expect(approval).to_contain_text("hello.txt")
        assert not (project / "hello.txt").exists()
        await page.screenshot(path=str(screenshot_path("webui-approval.png", tmp_path)))
        await approval.get_by_role("button", name="Allow once").click()

        tool = page.locator(".tool[data-tool=write_file] .result")
        await expect(tool).to_be_visible()
        await expect(page.locator(".msg.assistant").last).to_have_text("Wrote it.")
        await expect(page.locator(".reasoning .reasoning-text")).to_have_text("It is written.")
        await expect(approval).to_contain_text("answered: allowed_once")
        # The question reads before the result of the call it was about.
        order = await page.evaluate(
            """() => {
              const asked = document.querySelector(".approval[data-approval]");
              const result = document.querySelector(".tool[data-tool=write_file] .result");
              return asked.compareDocumentPosition(result) & Node.DOCUMENT_POSITION_FOLLOWING;
            }"""
        )
        assert order, "the approval card is drawn after the tool's result"
        assert (project / "hello.txt").read_text(encoding="utf-8") == "from the web"
        await expect(page.locator("#send")).to_be_enabled()
        await page.screenshot(path=str(screenshot_path("webui-chat.png", tmp_path)))

        session_id = page.url.split("#session=", 1)[1]
        await expect(page.locator(f"#sessions [data-session='{session_id}']")).to_contain_text(
            "please write hello.txt"
        )

        # Reload: the page resumes the same session from the store, history and all.
        await page.reload()
        await expect(page.locator("body[data-ready=true]")).to_be_attached()
        await expect(page.locator("#session-title")).to_contain_text(session_id)
        await expect(page.locator(".msg.user")).to_have_text(["please write hello.txt"])
        await expect(page.locator(".tool[data-tool=write_file] .result")).to_be_visible()
        await expect(page.locator(".msg.assistant")).to_have_text(["Wrote it."])

        mock.script(session_id, [say("Still the same session.")])
        await page.fill("#prompt", "are you still there?")
        await page.click("#send")
        await expect(page.locator(".msg.assistant").last).to_have_text("Still the same session.")
        assert errors == []
    mock.assert_complete()


async def test_a_rebound_host_and_a_foreign_origin_are_refused(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    require_chromium()
    async with web_stack("task", mock_rows(mock.base_url, None), tmp_path) as stack:
        port = stack.web.port
        # A DNS-rebinding page: the browser resolves evil.test to our loopback address.
        rule = "--host-resolver-rules=MAP evil.test 127.0.0.1"
        async with launch_chromium([rule]) as browser:
            page = await browser.new_page()
            response = await page.goto(f"http://evil.test:{port}/")
            assert response is not None and response.status == 403
            await expect(page.locator("body")).to_contain_text("not served here")
        async with httpx.AsyncClient(trust_env=False) as client:
            ok = await client.get(stack.url + "/")
            assert ok.status_code == 200 and "star-harness" in ok.text
            foreign = await client.get(
                stack.url + "/api/transcripts", headers={"origin": "http://evil.test"}
            )
            assert foreign.status_code == 403
            rebound = await client.get(
                stack.url + "/api/godot", headers={"host": f"evil.test:{port}"}
            )
            assert rebound.status_code == 403
        good, evil = f"127.0.0.1:{port}", f"evil.test:{port}"
        for hosts in ((good, evil), (evil, good)):
            for path, upgrade in (("/", False), ("/rpc", True)):
                status = await asyncio.to_thread(raw_status, port, path, hosts, upgrade)
                assert status == (403 if upgrade else 400), (hosts, path)
        async with httpx.AsyncClient(trust_env=False) as client:
            assert (await client.get(stack.url + "/")).status_code == 200


async def test_with_a_token_the_page_opened_with_it_works_and_others_are_refused(
    home: Path, tmp_path: Path, mock: MockLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_chromium()
    monkeypatch.setenv("WEB_UI_TOKEN", "tok+en/1-sixteen-chars")
    settings = WebSettings(port=0, auth_token_env="WEB_UI_TOKEN")
    rows = mock_rows(mock.base_url, None)
    async with (
        web_stack("task", rows, tmp_path, settings=settings) as stack,
        launch_chromium() as browser,
    ):
        page = await browser.new_page()
        errors = watch_page_errors(page)
        refused = await page.goto(stack.url + "/")
        assert refused is not None and refused.status == 403
        await _ready(page, stack.url + "/?token=" + quote("tok+en/1-sixteen-chars", safe=""))
        await expect(page.locator("#connection")).to_have_text("connected")
        await page.get_by_role("tab", name="NPC transcripts").click()
        await expect(page.locator("#transcripts")).to_contain_text("No encounter transcripts")
        assert errors == []


async def test_cancel_turn_ends_a_turn_waiting_for_an_approval(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    require_chromium()
    project = tmp_path / "project"
    project.mkdir()
    mock.script_next([call("write_file", {"path": "z.txt", "content": "z"}), say("unused")])
    async with (
        web_stack("task", mock_rows(mock.base_url, project), tmp_path) as stack,
        launch_chromium() as browser,
    ):
        page = await browser.new_page()
        errors = watch_page_errors(page)
        await _ready(page, stack.url)
        await page.fill("#prompt", "write z")
        await page.press("#prompt", "Enter")
        approval = page.locator(".approval[data-approval]")
        await expect(approval.get_by_role("button", name="Allow once")).to_be_visible()
        await page.click("#cancel")
        await expect(page.locator(".msg.error")).to_contain_text("turn aborted")
        await expect(approval).to_contain_text("cancelled")
        await expect(page.locator("#cancel")).to_be_hidden()
        assert not (project / "z.txt").exists()
        assert errors == []

"""`star-harness web` without a model key starts: the page says how to configure a model,
while NPC transcripts and the Godot panel work; a prompt gets the same clear error."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from playwright.async_api import expect
from web_support import launch_chromium, require_chromium, watch_page_errors
from webui_support import free_port, record_encounter

from session_protocol_support import child_env, write_patch
from starharness.runtime.protocol import MODEL_UNAVAILABLE
from starharness.sdk import Client, RpcCallError

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


async def test_web_starts_without_a_key_and_says_how_to_configure_a_model(
    tmp_path: Path,
) -> None:
    require_chromium()
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "npc").mkdir()
    await record_encounter(home, tmp_path / "npc")
    project = tmp_path / "game"
    project.mkdir()
    (project / "project.godot").write_text("[application]\n", encoding="utf-8")
    patch = write_patch(tmp_path, [{"id": "godot", "merge": {"base_port": free_port()}}])
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "starharness.cli", "web", "--port", str(port),
        "--profile", "godot", "--project", str(project), "--patch", str(patch),
        env=child_env(home),  # no provider key, nor a ./.env holding one
        cwd=tmp_path,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        assert process.stderr is not None
        banner = await asyncio.wait_for(process.stderr.readline(), 60)
        assert url in banner.decode(), banner
        async with await Client.connect_websocket(f"ws://127.0.0.1:{port}/rpc") as client:
            assert client.server is not None and client.server.model is not None
            assert client.server.model.ready is False
            assert client.server.model.variable == "DEEPSEEK_API_KEY"
            assert "DEEPSEEK_API_KEY is not set" in (client.server.model.problem or "")

        async with launch_chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            errors = watch_page_errors(page)
            await page.goto(url)
            await expect(page.locator("body[data-ready=true]")).to_be_attached()
            notice = page.locator("#model-problem")
            await expect(notice).to_be_visible()
            await expect(notice).to_contain_text("DEEPSEEK_API_KEY")
            await expect(notice).to_contain_text("--provider")
            await expect(page.locator("#send")).to_be_disabled()

            await page.get_by_role("tab", name="NPC transcripts").click()
            entry = page.locator("[data-transcript]")
            await expect(entry).to_contain_text("with p1")
            await entry.click()
            await expect(page.locator("details.request")).to_have_count(3)

            await page.get_by_role("tab", name="Godot").click()
            await expect(page.locator("[data-bridge=listening]")).to_be_visible()
            await expect(page.locator("[data-editors=none]")).to_be_visible()
            assert errors == []

        # A client that prompts anyway is refused with the session protocol's own error.
        async with await Client.connect_websocket(f"ws://127.0.0.1:{port}/rpc") as client:
            session = await client.create_session("no-model")
            with pytest.raises(RpcCallError) as refused:
                async for _ in session.prompt("hello"):
                    pass
            assert refused.value.code == MODEL_UNAVAILABLE
            assert "DEEPSEEK_API_KEY is not set" in refused.value.message
    finally:
        if process.returncode is None:
            process.terminate()
            await asyncio.wait_for(process.wait(), 30)

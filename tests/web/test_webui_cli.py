"""`star-harness web` as a process: it serves the page, stops on Ctrl-C, refuses exposure."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx
from webui_support import free_port

from session_protocol_support import child_env, mock_rows, write_patch
from starharness.mockllm import MockLlmServer


async def test_the_command_serves_the_page_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    async with MockLlmServer() as mock:
        patch = write_patch(tmp_path, mock_rows(mock.base_url, None))
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "starharness.cli", "web", "--port", str(port),
            "--patch", str(patch),
            env=child_env(home),
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert process.stderr is not None
            banner = await asyncio.wait_for(process.stderr.readline(), 60)
            assert f"http://127.0.0.1:{port}" in banner.decode()
            async with httpx.AsyncClient(trust_env=False) as client:
                page = await client.get(f"http://127.0.0.1:{port}/")
                assert page.status_code == 200 and 'src="/static/app.js"' in page.text
                script = await client.get(f"http://127.0.0.1:{port}/static/app.js")
                assert script.status_code == 200
                assert "javascript" in script.headers["content-type"]
            process.send_signal(signal.SIGINT)
            assert await asyncio.wait_for(process.wait(), 30) == 0
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def test_a_public_address_without_a_token_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    patch = write_patch(tmp_path, mock_rows("http://127.0.0.1:9/v1", None))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "starharness.cli", "web", "--host", "0.0.0.0",
        "--patch", str(patch),
        env=child_env(home),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "exposes the server to other machines" in err.decode()

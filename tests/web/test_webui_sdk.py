"""The SDK connects to a running `star-harness web` over its WebSocket: the same protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from webui_support import web_stack

from session_protocol_support import mock_rows, say
from starharness.mockllm import MockLlmServer
from starharness.sdk import Client, RpcCallError, TextDelta
from starharness.webui import WebSettings


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


async def test_the_sdk_prompts_through_the_web_uis_websocket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock: MockLlmServer
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    mock.script("ws-1", [say("Over the socket.")])
    async with web_stack("task", mock_rows(mock.base_url, None), tmp_path) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        async with await Client.connect_websocket(url) as client:
            session = await client.create_session("ws-1")
            stream = session.prompt("hello")
            text = "".join([u.text async for u in stream if isinstance(u, TextDelta)])
            assert text == "Over the socket."
            assert stream.result is not None and stream.result.turn == 1
            with pytest.raises(RpcCallError, match="unknown method"):
                await client.request("steer", {})
            assert [s.session_id for s in await client.list_sessions()] == ["ws-1"]


async def test_a_token_is_required_when_one_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock: MockLlmServer
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    monkeypatch.setenv("WEB_TOKEN", "s3cret-token")
    settings = WebSettings(port=0, auth_token_env="WEB_TOKEN")
    rows = mock_rows(mock.base_url, None)
    async with web_stack("task", rows, tmp_path, settings=settings) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        with pytest.raises(InvalidStatus) as refused:
            await Client.connect_websocket(url)
        assert refused.value.response.status_code == 403
        async with await Client.connect_websocket(url, token="s3cret-token") as client:
            assert client.server is not None and client.server.profile == "task"

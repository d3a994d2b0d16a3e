"""The SDK connects to a running `star-harness web` over its WebSocket: the same protocol."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from webui_support import web_stack

from session_protocol_support import call, mock_rows, say
from starharness.mockllm import MockLlmServer
from starharness.runtime.session import SESSIONS
from starharness.sdk import ApprovalAsked, Client, RpcCallError, TextDelta
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
            # Bad frames get JSON-RPC errors and the socket lives on.
            await client.send_raw("{not json")
            await client.send_raw('{"jsonrpc":"2.0","id":"b1","method":"prompt","params":[]}')
            for _ in range(2000):
                if len(client.unmatched) == 2:
                    break
                await asyncio.sleep(0.005)
            codes = sorted(answer["error"]["code"] for answer in client.unmatched)
            assert codes == [-32700, -32602]
            assert [s.session_id for s in await client.list_sessions()] == ["ws-1"]


async def test_a_token_is_required_when_one_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock: MockLlmServer
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    monkeypatch.setenv("WEB_TOKEN", "s3cret+token/=-sixteen")
    settings = WebSettings(port=0, auth_token_env="WEB_TOKEN")
    rows = mock_rows(mock.base_url, None)
    async with web_stack("task", rows, tmp_path, settings=settings) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        with pytest.raises(InvalidStatus) as refused:
            await Client.connect_websocket(url)
        assert refused.value.response.status_code == 403
        async with await Client.connect_websocket(url, token="s3cret+token/=-sixteen") as client:
            assert client.server is not None and client.server.profile == "task"
        # A browser passes it in the address, percent-encoded as the page's script does.
        async with httpx.AsyncClient(trust_env=False) as http:
            api = f"{stack.url}/api/godot"
            assert (await http.get(api)).status_code == 403
            assert (await http.get(api + "?token=wrong")).status_code == 403
            assert (await http.get(api + "?token=s3cret%2Btoken%2F%3D-sixteen")).status_code == 200


async def test_a_question_whose_client_goes_away_cancels_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock: MockLlmServer
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    project = tmp_path / "project"
    project.mkdir()
    mock.script(
        "ws-2", [call("write_file", {"path": "x.txt", "content": "x"}), say("Not written.")]
    )
    async with web_stack("task", mock_rows(mock.base_url, project), tmp_path) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        async with await Client.connect_websocket(url) as client:
            session = await client.create_session("ws-2")
            async for update in session.prompt("write x"):
                if isinstance(update, ApprovalAsked):
                    break  # leave without answering: the socket closes with the client
        sessions = stack.runtime.ctx.get(SESSIONS)
        for _ in range(2000):
            if "ws-2" not in sessions:
                break
            await asyncio.sleep(0.005)
        stored = await sessions.store.load("ws-2")
        assert stored is not None
        kinds = [e.type for e in stored.events]
        # The question is never answered "allowed": the session is disposed with its socket,
        # which withdraws the question (cancelled) and the turn; the call does not run.
        assert "approval/asked" in kinds
        decided = [e.data["decision"] for e in stored.events if e.type == "approval/decided"]
        assert decided == ["cancelled"]
        results = [e.data for e in stored.events if e.type == "tool/result"]
        assert [(r["is_error"], r["content"]) for r in results] == [(True, "Error: aborted")]
        ends = [e.data for e in stored.events if e.type == "turn/end"]
        assert [end["reason"] for end in ends] == ["aborted"]
        assert not (project / "x.txt").exists()

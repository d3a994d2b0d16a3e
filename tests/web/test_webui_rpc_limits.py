"""The web UI's `/rpc` answers every hostile message once and keeps the socket: deep nesting, a
5,000-digit id, a binary frame; an over-16 MB message gets exactly one answer too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from webui_support import web_stack

from session_protocol_support import mock_rows
from starharness.runtime.protocol import jsonrpc

DEEP = (
    '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"a":' + "[" * 1500 + "]" * 1500 + "}}"
)
HUGE_ID = '{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"initialize","params":{}}'
INIT = '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}'


async def _answer(socket: ClientConnection) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(await asyncio.wait_for(socket.recv(), 60)))


def _error(answer: dict[str, Any], code: int, request_id: Any = None) -> str:
    assert answer.get("id") == request_id and answer["error"]["code"] == code, answer
    return str(answer["error"]["message"])


async def test_web_rpc_answers_deep_huge_and_binary_messages_and_serves_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    rows = mock_rows("http://127.0.0.1:9/v1", None)
    async with web_stack("task", rows, tmp_path) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        async with connect(url, max_size=None, proxy=None) as socket:
            await socket.send(DEEP)
            assert "nested more than" in _error(await _answer(socket), jsonrpc.INVALID_REQUEST)
            await socket.send(HUGE_ID)
            assert "4300 digits" in _error(await _answer(socket), jsonrpc.INVALID_REQUEST)
            for line in ("[]", "42", "null", '"x"', "{bad json"):
                await socket.send(line)
                assert (await _answer(socket))["error"]["code"] in (-32600, -32700)
            await socket.send(INIT.encode())  # a binary frame holding a request
            answer = await _answer(socket)
            assert answer["id"] == "init" and "result" in answer, answer


async def test_web_rpc_answers_an_oversized_message_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    rows = mock_rows("http://127.0.0.1:9/v1", None)
    oversized = (
        '{"jsonrpc":"2.0","id":6,"method":"x","params":{"a":"' + "x" * jsonrpc.MAX_LINE + '"}}'
    )
    async with web_stack("task", rows, tmp_path) as stack:
        url = f"ws://127.0.0.1:{stack.web.port}/rpc"
        async with connect(url, max_size=None, proxy=None) as socket:
            await socket.send(oversized)
            answers: list[dict[str, Any]] = []
            closed: ConnectionClosed | None = None
            try:
                answers.append(await _answer(socket))
                await socket.send(INIT)
                answers.append(await _answer(socket))
            except ConnectionClosed as error:
                closed = error
            # The server read the message: one JSON-RPC error, then the socket serves on.
            assert closed is None, closed
            [refused, served] = answers
            assert "longer than" in _error(refused, jsonrpc.INVALID_REQUEST)
            assert served["id"] == "init", served
        async with connect(url, proxy=None) as socket:  # the server serves the next socket
            await socket.send(INIT)
            assert (await _answer(socket))["id"] == "init"

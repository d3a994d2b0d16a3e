"""Leaving is normal: tabs and SDK clients that go away, however they go, log nothing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import websockets
from webui_support import web_stack

from session_protocol_support import call, mock_rows
from starharness.mockllm import MockLlmServer
from starharness.runtime.session import SESSIONS
from starharness.sdk import ApprovalAsked, Client

_INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
_LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.asgi", "starharness")
"""Root and the loggers that do not propagate to it (uvicorn's own are configured not to)."""


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record not in self.records:  # one record can reach two of the watched loggers
            self.records.append(record)


@contextmanager
def _watched_logs() -> Iterator[_Records]:
    handler = _Records()
    for name in _LOGGERS:
        logging.getLogger(name).addHandler(handler)
    try:
        yield handler
    finally:
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(handler)


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


async def test_twenty_clients_leave_without_a_logged_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock: MockLlmServer
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    project = tmp_path / "project"
    project.mkdir()
    for n in range(5):
        mock.script(f"leave-{n}", [call("write_file", {"path": f"{n}.txt", "content": "x"})])
    async with web_stack("task", mock_rows(mock.base_url, project), tmp_path) as stack:
        # Watched from here: uvicorn's logging setup, on start, replaced its loggers' handlers.
        with _watched_logs() as logs:
            url = f"ws://127.0.0.1:{stack.web.port}/rpc"
            for n in range(5):
                # A socket that says nothing and closes.
                async with websockets.connect(url):
                    pass
                # A client that is answered, then closes while its answer may still be sent.
                async with websockets.connect(url) as socket:
                    await socket.send(_INITIALIZE)
                    await socket.recv()
                    await socket.send(_INITIALIZE)
                # A client whose connection drops without a closing handshake.
                socket = await websockets.connect(url)
                await socket.send(_INITIALIZE)
                await socket.recv()
                socket.transport.abort()
                # An SDK client that leaves mid-turn, with a question open.
                async with await Client.connect_websocket(url) as client:
                    session = await client.create_session(f"leave-{n}")
                    async for update in session.prompt("write it"):
                        if isinstance(update, ApprovalAsked):
                            break
            sessions = stack.runtime.ctx.get(SESSIONS)
            # Every connection is gone and its session disposed before the server stops.
            for _ in range(2000):
                if stack.web.gate.open == 0 and not sessions.live():
                    break
                await asyncio.sleep(0.005)
    noisy = [
        f"{r.name} {r.levelname}: {r.getMessage()}"
        for r in logs.records
        if r.levelno >= logging.ERROR or r.exc_info is not None
    ]
    assert noisy == []
    assert not any(project.iterdir())  # no question was answered by the leaving

"""Chat requests the handler would refuse are answered 400 before the server answers, served
by uvicorn on a loopback socket around a small app that echoes what it received."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.localmodel.idle_work import Receive, Scope, Send
from starharness.localmodel.request_check import CHAT_PATH, RequestCheck
from starharness.npc.server.engine import EmbeddedServer, until_started


class _Echo:
    """Answers every request with its method, path and body, and counts them."""

    def __init__(self) -> None:
        self.seen = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        self.seen += 1
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        answer = json.dumps({"got": f"{scope['method']} {scope['path']}", "body": body.decode()})
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": answer.encode()})


def _problem(body: Mapping[str, Any]) -> str | None:
    return "tool_choice names 'nope'" if body.get("tool_choice") == "nope" else None


@contextlib.asynccontextmanager
async def _serving(app: _Echo) -> AsyncIterator[httpx.AsyncClient]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(
        RequestCheck(app, _problem), log_level="warning", access_log=False, lifespan="on"
    )
    engine = EmbeddedServer(config)
    task = asyncio.create_task(engine.serve(sockets=[listener]))
    await until_started(engine, task, "the test server")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            yield client
    finally:
        engine.should_exit = True
        await task


async def test_a_request_the_handler_would_refuse_is_a_400_that_says_why() -> None:
    app = _Echo()
    async with _serving(app) as client:
        answer = await client.post(CHAT_PATH, json={"messages": [], "tool_choice": "nope"})
        assert answer.status_code == 400
        assert answer.json() == {
            "error": {
                "message": "tool_choice names 'nope'",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
        assert app.seen == 0
        # Deeper than the JSON parser goes: said, not a bare 500.
        deep = await client.post(CHAT_PATH, content="[" * 100_000)
        assert deep.status_code == 400
        assert deep.json()["error"]["message"] == "the request body is nested too deeply to read"
        assert app.seen == 0
        # The server lives on.
        assert (await client.post(CHAT_PATH, json={"messages": []})).status_code == 200


async def test_everything_else_reaches_the_app_as_it_was_sent() -> None:
    app = _Echo()
    async with _serving(app) as client:
        refused = json.dumps({"tool_choice": "nope"})
        for method, path, body in [
            ("POST", "/v1/completions", refused),  # not the chat endpoint
            ("GET", "/v1/models", ""),
            ("POST", CHAT_PATH, "not json"),  # the app's own validation answers it
            ("POST", CHAT_PATH, "[1, 2]"),
        ]:
            answer = await client.request(method, path, content=body)
            assert answer.json() == {"got": f"{method} {path}", "body": body}


@settings(max_examples=20, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=7))
def test_a_body_sent_in_pieces_reaches_the_app_whole(text: str, pieces: int) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": text}]}).encode()
    size = max(1, len(body) // pieces)

    async def chunks() -> AsyncIterator[bytes]:
        for at in range(0, len(body), size):
            yield body[at : at + size]

    async def run() -> None:
        async with _serving(_Echo()) as client:
            answer = await client.post(CHAT_PATH, content=chunks())
            assert answer.json()["body"] == body.decode()

    asyncio.run(run())

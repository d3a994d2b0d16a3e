"""What an open WebSocket lets go after its handshake, over a real connection."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from npc_support import eventually, serving
from tinygame import GAME
from tinygame.brain import respond
from websockets.frames import Frame
from websockets.http11 import Request

from starharness.npc.server.coalescing import CoalescingWebSocketProtocol


def _protocol(connection: Any) -> CoalescingWebSocketProtocol:
    # Starlette's WebSocket receives through the protocol's bound `receive`.
    protocol = connection.websocket._receive.__self__
    assert isinstance(protocol, CoalescingWebSocketProtocol)
    return protocol


async def test_an_open_connection_keeps_no_handshake_and_still_tells_host_origin_peer(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack:
        port = stack.running.port
        origin = f"http://127.0.0.1:{port}"
        extra = {"User-Agent": "lean-test", "Cookie": "a=b"}
        async with stack.client(origin=origin, additional_headers=extra) as page:
            frames = await page.open("e1", "n-baker", "p1")
            assert frames[-1]["t"] == "encounter.idle"
            await eventually(lambda: len(stack.running.server.connections) == 1)
            (connection,) = stack.running.server.connections
            protocol = _protocol(connection)
            assert protocol.request is None
            assert protocol.response is None
            # The frame parser is a fresh one: no generator frame holds the request.
            parser: Any = protocol.conn.parser
            assert parser.gi_code.co_name == "parse"
            kept = inspect.getgeneratorlocals(parser)
            assert not any(isinstance(v, Request) for v in kept.values())
            assert "request" not in kept
            assert protocol.__dict__ == {}  # every attribute uvicorn sets is in a slot
            websocket = connection.websocket
            assert websocket.headers.get("host") == f"127.0.0.1:{port}"
            assert websocket.headers.get("origin") == origin
            assert websocket.headers.get("user-agent") is None  # let go once admitted
            assert websocket.client is not None and websocket.client.host == "127.0.0.1"
            # The connection still works after all that was dropped.
            turn = await page.say("e1", "Any bread?")
            assert turn[-1]["t"] == "encounter.idle"
            assert any(f["t"] == "say.delta" for f in turn)
            # Between frames the parser is a fresh one again: it keeps no frame it parsed.
            parser = protocol.conn.parser
            assert parser.gi_code.co_name == "parse"
            assert parser.gi_yieldfrom.gi_code.co_name == "at_eof"
            kept = inspect.getgeneratorlocals(parser)
            assert not any(isinstance(v, Frame) for v in kept.values())
            assert "frame" not in kept


async def test_frames_right_after_the_handshake_are_each_read(tmp_path: Path) -> None:
    """Two connections (the second shares the first's compression settings), frames back to
    back: the restarted parser loses no byte."""
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as first,
        stack.client() as second,
    ):
        await first.send({"t": "hello", "playerId": "p1"})
        await second.send({"t": "hello", "playerId": "p1"})
        assert (await first.recv())["t"] == "welcome"
        assert (await second.recv())["t"] == "welcome"
        bad = [first.send({"t": "nope", "n": n}) for n in range(5)]
        for sending in bad:
            await sending
        codes = [(await first.recv())["code"] for _ in range(5)]
        assert codes == ["bad_frame"] * 5

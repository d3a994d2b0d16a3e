"""What an open WebSocket keeps while it waits for its next frame, over real connections.

The server replaces pieces of uvicorn (0.54) and Starlette to keep less per socket: the
receive (a future instead of coroutine frames), the proxy-headers middleware (run before the
app instead of around it), the connection's addresses (shared tuples). These tests pin what
those pieces stand in for, and check the behaviour is the same.
"""

from __future__ import annotations

import asyncio
import inspect
import textwrap
from pathlib import Path
from typing import Any

from npc_support import eventually, serving
from tinygame import GAME
from tinygame.brain import respond
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from starharness.npc.server.coalescing import CoalescingWebSocketProtocol
from starharness.npc.server.proxied import ProxyHeaders


def _protocol(connection: Any) -> CoalescingWebSocketProtocol:
    protocol = connection.websocket._receive.__self__
    assert isinstance(protocol, CoalescingWebSocketProtocol)
    return protocol


def _awaiting(task: asyncio.Task[Any]) -> tuple[list[str], object]:
    """The coroutines a task's await chain runs through, and what the last one awaits."""
    names: list[str] = []
    waited: Any = task.get_coro()
    while inspect.iscoroutine(waited):
        names.append(waited.cr_code.co_name)
        waited = waited.cr_await
    return names, waited


def _on_a_future(task: asyncio.Task[Any]) -> bool:
    # A coroutine awaiting a future awaits the future's own iterator; the task waits on it.
    waited = _awaiting(task)[1]
    future: object = task._fut_waiter  # type: ignore[attr-defined]
    return type(waited).__name__ == "FutureIter" and isinstance(future, asyncio.Future)


async def test_an_idle_connection_waits_on_one_future_in_its_own_frame(tmp_path: Path) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as first,
        stack.client() as second,
    ):
        for page in (first, second):
            frames = await page.open("e1", "n-baker", "p1")
            assert frames[-1]["t"] == "encounter.idle"
        await eventually(lambda: len(stack.running.server.connections) == 2)
        connections = list(stack.running.server.connections)
        for connection in connections:
            task = connection._reading
            assert task is not None
            await eventually(lambda task=task: _on_a_future(task))
            # uvicorn's task runs the connection's coroutine, which waits on a future:
            # no Starlette, uvicorn, proxy or queue frame in between.
            assert _awaiting(task)[0] == ["run_asgi", "serve"]
            protocol = _protocol(connection)
            assert not protocol.read_paused  # the frame was taken: reading goes on
            assert protocol.transport.is_reading()
            assert protocol.client is protocol.transport.get_extra_info("peername")
            assert connection.websocket.client == protocol.client
        one, other = (_protocol(c) for c in connections)
        assert one.server is other.server  # one tuple for the listening address
        assert one.scope["server"] is one.server
        scopes: list[dict[str, Any]] = [dict(one.scope), dict(other.scope)]
        for key in ("asgi", "extensions", "path", "raw_path"):
            assert scopes[0][key] is scopes[1][key]
        assert scopes[0]["path"] == "/gh" and scopes[0]["subprotocols"] == ()
        assert "state" not in scopes[0]  # empty: Starlette makes one again on demand
        assert dict(connections[0].websocket.state._state) == {}
        # Still serving after all that.
        turn = await first.say("e1", "Any bread?")
        assert turn[-1]["t"] == "encounter.idle"


async def test_frames_sent_back_to_back_are_each_read_and_reading_resumes(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as page:
        await page.send({"t": "hello", "playerId": "p1"})
        assert (await page.recv())["t"] == "welcome"
        sending = [page.send({"t": "nope", "n": n}) for n in range(30)]
        for send in sending:
            await send
        codes = [(await page.recv())["code"] for _ in range(30)]
        assert codes == ["bad_frame"] * 30
        (connection,) = stack.running.server.connections
        protocol = _protocol(connection)
        await eventually(lambda: not protocol.read_paused)
        assert protocol.transport.is_reading()
        welcome = await page.open("e1", "n-baker", "p1")
        assert welcome[-1]["t"] == "encounter.idle"


async def test_a_trusted_proxy_names_the_client_and_scheme(tmp_path: Path) -> None:
    headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client(additional_headers=headers) as page,
    ):
        await page.send({"t": "hello", "playerId": "p1"})
        assert (await page.recv())["t"] == "welcome"
        (connection,) = stack.running.server.connections
        websocket = connection.websocket
        assert websocket.client is not None and websocket.client.host == "203.0.113.7"
        assert websocket.scope["scheme"] == "wss"


def _scope(client: tuple[str, int], headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "websocket", "scheme": "ws", "client": client, "headers": headers}


async def test_proxy_headers_edit_the_scope_as_uvicorns_middleware_does() -> None:
    cases = [
        (("127.0.0.1", 5000), [(b"x-forwarded-for", b"203.0.113.7, 10.0.0.2")]),
        (("127.0.0.1", 5000), [(b"x-forwarded-proto", b"https")]),
        (("127.0.0.1", 5000), [(b"x-forwarded-proto", b"gopher")]),
        (("198.51.100.1", 5000), [(b"x-forwarded-for", b"203.0.113.7")]),  # not trusted
        (("10.0.0.2", 5000), [(b"x-forwarded-for", b"203.0.113.7")]),
    ]
    seen: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(dict(scope))

    async def nothing() -> Any:
        return {}

    async def ignore(message: Any) -> None:
        return None

    for trusted in ("127.0.0.1", "10.0.0.0/8, 127.0.0.1", "*"):
        for client, headers in cases:
            theirs = ProxyHeadersMiddleware(app, trusted)  # type: ignore[arg-type]
            await theirs(_scope(client, headers), nothing, ignore)  # type: ignore[arg-type]
            ours = ProxyHeaders(app, trusted)
            await ours(_scope(client, headers), nothing, ignore)
            assert seen[-1] == seen[-2]
    assert any(s["client"] == ("203.0.113.7", 0) for s in seen)
    assert any(s["scheme"] == "wss" for s in seen)


def _source(function: object) -> str:
    return textwrap.dedent(inspect.getsource(function))  # type: ignore[arg-type]


def test_uvicorn_receives_and_pauses_as_the_override_assumes() -> None:
    """The pinned uvicorn: `receive` is what CoalescingWebSocketProtocol.receive replaces, and
    reading pauses right after a message is queued (so `_ReceiveQueue` resumes it later)."""
    assert _source(WebSocketsSansIOProtocol.receive) == textwrap.dedent(
        """\
        async def receive(self) -> ASGIReceiveEvent:
            message = await self.queue.get()
            if self.read_paused and self.queue.empty():
                self.read_paused = False
                self.transport.resume_reading()
            return message
        """
    )
    queued = _source(WebSocketsSansIOProtocol.send_receive_event_to_app)
    assert queued.endswith(
        '        self.queue.put_nowait({"type": "websocket.receive", "bytes": data})\n'
        "    if not self.read_paused:\n"
        "        self.read_paused = True\n"
        "        self.transport.pause_reading()\n"
    )

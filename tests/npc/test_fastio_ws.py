"""The lean WebSocket protocol: chosen only where it was tested, and what an open one lets go."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any

import pytest
from npc_support import eventually, serving
from tinygame import GAME
from tinygame.brain import respond
from websockets.frames import Frame
from websockets.http11 import Request

from starharness._fastio import ws
from starharness._fastio.ws_dequeless import LightEvent, LightQueue
from starharness._fastio.ws_lean import LeanWebSocketProtocol
from starharness.npc import ServerSettings

STOCK_ENV = "STAR_HARNESS_STOCK_TRANSPORTS"


def _releases(monkeypatch: pytest.MonkeyPatch, **versions: str) -> None:
    """Pretend these releases are installed (the others are the real ones)."""
    real = ws.installed
    monkeypatch.setattr(ws, "installed", lambda library: versions.get(library, real(library)))
    monkeypatch.setattr(ws, "_told", set())


def test_the_lean_protocol_is_chosen_on_the_tested_releases(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(STOCK_ENV, raising=False)
    _releases(monkeypatch, uvicorn="0.54.3", websockets="17.0")
    with caplog.at_level(logging.INFO, logger="starharness.fastio"):
        assert ws.websocket_protocol() is LeanWebSocketProtocol
    assert not caplog.records


@pytest.mark.parametrize(
    ("library", "version"),
    [
        ("uvicorn", "0.55.0"),
        ("uvicorn", "0.53.9"),
        ("uvicorn", "1.0"),
        ("websockets", "18.0"),
        ("websockets", "16.0"),
        ("uvicorn", ""),  # not installed as a distribution: no release to check
        ("uvicorn", "dev"),
    ],
)
def test_outside_the_tested_releases_the_server_runs_uvicorns_own_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, library: str, version: str
) -> None:
    monkeypatch.delenv(STOCK_ENV, raising=False)
    _releases(monkeypatch, **{library: version})
    with caplog.at_level(logging.INFO, logger="starharness.fastio"):
        assert ws.websocket_protocol() == ws.STOCK_PROTOCOL == "websockets-sansio"
        assert ws.websocket_protocol() == ws.STOCK_PROTOCOL
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    said = record.getMessage()
    assert f"{library} {version} is outside the releases" in said
    assert "websockets-sansio" in said


def test_the_stock_setting_picks_uvicorns_own(monkeypatch: pytest.MonkeyPatch) -> None:
    _releases(monkeypatch, uvicorn="0.54.0", websockets="17.4")
    monkeypatch.setenv(STOCK_ENV, "1")
    assert ws.websocket_protocol() == ws.STOCK_PROTOCOL
    monkeypatch.setenv(STOCK_ENV, "")
    assert ws.websocket_protocol() is LeanWebSocketProtocol


def test_release_reads_the_leading_numbers() -> None:
    assert ws.release("0.54.0") == (0, 54, 0)
    assert ws.release("0.55.0rc1") == (0, 55, 0)
    assert ws.release("17.4.post1") == (17, 4)
    assert ws.release("") is None
    assert ws.release("dev") is None


def test_the_installed_releases_are_the_tested_ones() -> None:
    """The lean protocol is what this tree serves and tests; a lock file moving uvicorn or
    websockets past `TESTED` must come with the range widened after the tests pass on it."""
    for library, (low, high) in ws.TESTED.items():
        found = ws.release(ws.installed(library))
        assert found is not None and low <= found < high, (library, found)


def _protocol(connection: Any) -> Any:
    # Starlette's WebSocket receives through the protocol's bound `receive`.
    return connection.websocket._receive.__self__


async def test_an_open_lean_connection_keeps_no_handshake_and_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STOCK_ENV, raising=False)
    async with serving(GAME, tmp_path, responder=respond) as stack:
        port = stack.running.port
        origin = f"http://127.0.0.1:{port}"
        extra = {"User-Agent": "lean-test", "Cookie": "a=b"}
        async with stack.client(origin=origin, headers=extra) as page:
            frames = await page.open("e1", "n-baker", "p1")
            assert frames[-1]["t"] == "encounter.idle"
            await eventually(lambda: len(stack.running.server.connections) == 1)
            (connection,) = stack.running.server.connections
            protocol = _protocol(connection)
            assert isinstance(protocol, LeanWebSocketProtocol)
            assert isinstance(protocol.queue, LightQueue)
            assert isinstance(protocol.writable, LightEvent)
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
            assert websocket.client is not None and websocket.client.host == "127.0.0.1"
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


async def test_compressing_lean_connections_share_settings_and_lose_no_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two compressing connections (the second shares the first's extension settings), frames
    back to back right after each handshake: the restarted parser loses no byte."""
    monkeypatch.delenv(STOCK_ENV, raising=False)
    settings = ServerSettings(port=0, compress_frames=True)
    async with (
        serving(GAME, tmp_path, settings, responder=respond) as stack,
        stack.client(compression="deflate") as first,
        stack.client(compression="deflate") as second,
    ):
        await first.send({"t": "hello", "playerId": "p1"})
        await second.send({"t": "hello", "playerId": "p1"})
        assert (await first.recv())["t"] == "welcome"
        assert (await second.recv())["t"] == "welcome"
        for page in (first, second):
            for n in range(5):
                await page.send({"t": "nope", "n": n})
        for page in (first, second):
            codes = [(await page.recv())["code"] for _ in range(5)]
            assert len(codes) == 5
        protocols = [_protocol(c) for c in stack.running.server.connections]
        assert len(protocols) == 2
        assert all(isinstance(p, LeanWebSocketProtocol) for p in protocols)
        one, other = (p.conn for p in protocols)
        assert one.extensions and other.extensions  # compression negotiated on both
        assert one.available_extensions is other.available_extensions


@pytest.mark.parametrize("stock", ["1", ""])
@pytest.mark.parametrize("trusted", [True, False])
async def test_forwarded_headers_name_the_client_only_from_a_trusted_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stock: str, trusted: bool
) -> None:
    """Both ways (uvicorn's middleware around the app, or its code run before the lean one's)."""
    monkeypatch.setenv(STOCK_ENV, stock)
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1" if trusted else "192.0.2.1")
    headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client(headers=headers) as page,
    ):
        await page.send({"t": "hello", "playerId": "p1"})
        assert (await page.recv())["t"] == "welcome"
        (connection,) = stack.running.server.connections
        assert isinstance(_protocol(connection), LeanWebSocketProtocol) is not bool(stock)
        websocket = connection.websocket
        assert websocket.client is not None
        assert websocket.client.host == ("203.0.113.7" if trusted else "127.0.0.1")
        assert websocket.scope["scheme"] == ("wss" if trusted else "ws")

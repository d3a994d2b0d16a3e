"""Slow and hostile sockets are shed and bystanders served (issue 38), through the real server.

Silent sockets and half-sent heads are closed after the header timeout, an oversized head (a
WebSocket upgrade too) is answered 431 at once, one address over its cap gets 429, and at the
descriptor limit the log gets a line now and then, not a traceback per failed accept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from npc_support import WAIT_S, eventually, serving
from tinygame import GAME

from starharness.npc import LimitsSettings, ServerSettings

_Socket = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def _settings(**limits: object) -> ServerSettings:
    return ServerSettings(port=0, limits=LimitsSettings.model_validate(limits))


@asynccontextmanager
async def _sockets(port: int, count: int) -> AsyncIterator[list[_Socket]]:
    opened: list[_Socket] = []
    try:
        for _ in range(count):
            opened.append(await asyncio.open_connection("127.0.0.1", port))
        yield opened
    finally:
        for _, writer in opened:
            writer.close()


async def _answer(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the socket."""
    return await asyncio.wait_for(reader.read(), WAIT_S)


def _head(port: int, *lines: str, upgrade: bool = False) -> bytes:
    head = [f"GET {'/gh' if upgrade else '/healthz'} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if upgrade:
        head += [
            "Connection: Upgrade",
            "Upgrade: websocket",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        ]
    return ("\r\n".join([*head, *lines]) + "\r\n\r\n").encode()


async def _round_trip(ws_url: str) -> None:
    from npc_support import Client

    async with Client(ws_url) as bystander:
        await bystander.send({"t": "hello", "playerId": "p1"})
        assert (await bystander.recv())["t"] == "welcome"


async def test_silent_sockets_are_closed_while_a_bystander_is_served(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, _settings(header_timeout_s=2)) as stack:
        running = stack.running
        async with _sockets(running.port, 500) as silent:
            # While all 500 are open, a real client is served.
            await _round_trip(stack.ws_url)
            answers = await asyncio.gather(*(_answer(reader) for reader, _ in silent))
        # Closed without a word: they asked nothing.
        assert answers == [b""] * 500
        assert running.gate.shed["header_timeout"] >= 500
        await _round_trip(stack.ws_url)


async def test_half_sent_heads_are_answered_408_and_closed(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, _settings(header_timeout_s=1)) as stack:
        port = stack.running.port
        async with _sockets(port, 3) as (first, second, keep_alive):
            first[1].write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
            second[1].write(b"GET /gh HTTP/1.1\r\nUpgrade: webso")
            # A whole request first, then half of the next on the same socket.
            keep_alive[1].write(_head(port))
            status = await asyncio.wait_for(keep_alive[0].readuntil(b"\r\n\r\n"), WAIT_S)
            assert status.startswith(b"HTTP/1.1 200")
            keep_alive[1].write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1")
            for reader, _ in (first, second, keep_alive):
                answer = await _answer(reader)
                # (After the first request's body, on the kept-alive socket.)
                assert answer.split(b"}", 1)[-1].startswith(b"HTTP/1.1 408 "), answer
                assert answer.endswith(b"took over 1 s\n")


@pytest.mark.parametrize(
    ("lines", "upgrade", "words"),
    [
        (["X-Big: " + "a" * 9000], True, b"longer than 8192"),
        (["X-Big: " + "a" * 9000], False, b"longer than 8192"),
        ([f"X-Many-{i}: {'b' * 1000}" for i in range(40)], True, b"over 32768 bytes"),
        ([f"X-{i}: c" for i in range(130)], True, b"more than 128 headers"),
    ],
)
async def test_an_oversized_head_is_answered_431_at_once(
    tmp_path: Path, lines: list[str], upgrade: bool, words: bytes
) -> None:
    # A long header timeout: the answer is the limit's, not the timer's.
    async with serving(GAME, tmp_path, _settings(header_timeout_s=600)) as stack:
        port = stack.running.port
        async with _sockets(port, 1) as [(reader, writer)]:
            writer.write(_head(port, *lines, upgrade=upgrade))
            answer = await _answer(reader)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert words in answer
        assert stack.running.gate.shed["header_too_large"] == 1
        await _round_trip(stack.ws_url)
        async with httpx.AsyncClient(trust_env=False) as client:
            metrics = (await client.get(stack.running.url + "/metrics")).text
        assert 'star_harness_npc_shed_sockets_total{reason="header_too_large"' in metrics


async def test_one_address_may_hold_only_its_cap_of_sockets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # uvicorn trusts 127.0.0.1 as a proxy unless told otherwise, and proxies are never capped.
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "192.0.2.1")
    settings = _settings(connections_per_address=3, uncapped_addresses=[], header_timeout_s=600)
    async with serving(GAME, tmp_path, settings) as stack:
        running = stack.running
        async with _sockets(running.port, 3) as held:
            await eventually(lambda: running.gate.by_address.get("127.0.0.1") == 3)
            async with _sockets(running.port, 2) as extra:
                for reader, _ in extra:
                    answer = await _answer(reader)
                    assert answer.startswith(b"HTTP/1.1 429 "), answer
                    assert b"at most 3 at once" in answer
            assert running.gate.shed["over_cap"] == 2
            held[0][1].close()
            await eventually(lambda: running.gate.by_address.get("127.0.0.1") == 2)
            # A place is free again: a WebSocket is served.
            await _round_trip(stack.ws_url)
        await eventually(lambda: "127.0.0.1" not in running.gate.by_address)


def test_the_descriptor_limit_does_not_flood_the_log(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    command = [sys.executable, "-m", "starharness.cli", "serve", "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--ready-file", str(ready)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160)),
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.05)
        url = json.loads(ready.read_text())["url"]
        port = int(url.rsplit(":", 1)[1])
        asyncio.run(_exhaust(port))
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    log = err.decode(errors="replace")
    # Sockets past what the descriptors allow are refused (503) before accept() runs out;
    # seconds at the limit are a line per interval, not a traceback per failed accept (~3 MB/s).
    assert "as many as the descriptor limit allows" in log, log[-2000:]
    assert log.count("descriptor limit") <= 3, log[-2000:]
    assert "Traceback" not in log, log[-3000:]
    assert len(log) < 20_000, log[-2000:]


async def _exhaust(port: int) -> None:
    """Hold more sockets than the server has descriptors for a few seconds, then check that
    it serves again once they are gone."""
    async with _sockets(port, 300) as held:
        await asyncio.sleep(3)
        refused = 0
        for reader, _ in held[-100:]:
            answer = await asyncio.wait_for(reader.read(), WAIT_S)
            refused += answer.startswith(b"HTTP/1.1 503 ")
        assert refused > 0
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            async with _sockets(port, 1) as [(reader, writer)]:
                writer.write(_head(port))
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 2)
                if answer.startswith(b"HTTP/1.1 200"):
                    return
                # 503 while the server still counts the sockets just closed.
                assert answer.startswith(b"HTTP/1.1 503 "), answer
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        assert time.monotonic() < deadline, "the server did not recover"
        await asyncio.sleep(0.2)


async def test_a_flooding_sender_is_slowed_and_a_bystander_served(tmp_path: Path) -> None:
    from npc_support import Client

    settings = _settings(frames_per_second=5, frame_burst=10)
    async with serving(GAME, tmp_path, settings) as stack:
        frame = json.dumps({"t": "encounter.say", "id": "nowhere", "text": "x"})
        async with Client(stack.ws_url) as flooder:
            begun = time.monotonic()
            for _ in range(200):
                await flooder.send(frame)
            # Its frames are handled at its rate (bursts of 10, then 5 a second), not at once:
            # no error comes back for most of them yet.
            answered = 0
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(1.0):
                    while True:
                        await flooder.recv()
                        answered += 1
            allowed = 10 + 5 * (time.monotonic() - begun) + 2
            assert 10 <= answered <= allowed, (answered, allowed)
            # Meanwhile another connection is served at once (its own budget).
            await _round_trip(stack.ws_url)
            flooder.ws.transport.abort()  # its close would wait behind its own frames


async def test_uvicorns_warning_per_bad_request_is_logged_once_per_interval(
    tmp_path: Path,
) -> None:
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    uvicorn_log = logging.getLogger("uvicorn.error")  # uvicorn's own: it does not propagate
    async with serving(GAME, tmp_path, _settings()) as stack:
        uvicorn_log.addHandler(handler)
        try:
            for _ in range(50):
                async with _sockets(stack.running.port, 1) as [(reader, writer)]:
                    writer.write(b"NOT HTTP AT ALL\r\n\r\n")
                    answer = await _answer(reader)
                    assert answer.startswith(b"HTTP/1.1 400 "), answer
        finally:
            uvicorn_log.removeHandler(handler)
    invalid = [line for line in seen if "Invalid HTTP request" in line]
    assert len(invalid) == 1, invalid


async def test_asyncios_warning_per_write_to_a_gone_socket_is_logged_once_per_interval(
    tmp_path: Path,
) -> None:
    """uvicorn's WebSocket still writes answers to a client that left mid-flood; asyncio warns
    once per write past the fifth."""
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    asyncio_log = logging.getLogger("asyncio")
    async with serving(GAME, tmp_path, _settings()) as stack:
        asyncio_log.addHandler(handler)
        try:
            async with _sockets(stack.running.port, 1) as [(_, writer)]:
                transport = writer.transport
                assert isinstance(transport, asyncio.Transport)
                transport.abort()
                await asyncio.sleep(0)
                for _ in range(50):  # as the server's writes to a gone socket are reported
                    transport.write(b"x")
        finally:
            asyncio_log.removeHandler(handler)
    gone = [line for line in seen if "socket.send() raised exception" in line]
    assert len(gone) == 1, gone

"""The server's coalescing transport over a real loopback connection."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.npc.server.coalescing import CoalescingTransport, coalescing_protocol


@dataclass
class _Counted:
    """The real socket transport, counting the writes that reach it."""

    inner: asyncio.Transport
    writes: list[bytes] = field(default_factory=list[bytes])

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.inner.write(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@dataclass
class _Pair:
    transport: CoalescingTransport
    counted: _Counted
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


@contextlib.asynccontextmanager
async def _loopback_pair(hold_s: float = 0.0) -> AsyncIterator[_Pair]:
    """A real TCP connection on 127.0.0.1; the server side writes through the transport."""
    accepted: asyncio.Future[asyncio.Transport] = asyncio.get_running_loop().create_future()

    class _Server(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            accepted.set_result(transport)

    server = await asyncio.get_running_loop().create_server(_Server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    raw = await accepted
    counted = _Counted(raw)
    loop = asyncio.get_running_loop()
    transport = CoalescingTransport(counted, loop, hold_s=hold_s)  # type: ignore[arg-type]
    try:
        yield _Pair(transport, counted, reader, writer)
    finally:
        writer.close()
        raw.abort()
        server.close()
        await server.wait_closed()


@pytest.fixture
async def pair() -> AsyncIterator[_Pair]:
    async with _loopback_pair() as made:
        yield made


async def _next_step() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def test_the_first_write_of_a_step_leaves_at_once_and_the_rest_together(
    pair: _Pair,
) -> None:
    pair.transport.write(b"say.delta;")
    assert pair.counted.writes == [b"say.delta;"]  # before the loop ran again
    pair.transport.write(b"say.end;")
    pair.transport.write(b"options;")
    pair.transport.write(b"idle;")
    assert pair.counted.writes == [b"say.delta;"]
    assert pair.transport.get_write_buffer_size() >= len(b"say.end;options;idle;")
    await _next_step()
    assert pair.counted.writes == [b"say.delta;", b"say.end;options;idle;"]
    received = await pair.reader.readexactly(len(b"say.delta;say.end;options;idle;"))
    assert received == b"say.delta;say.end;options;idle;"


async def test_a_later_step_starts_with_an_immediate_write_again(pair: _Pair) -> None:
    pair.transport.write(b"a")
    pair.transport.write(b"b")
    await _next_step()
    pair.transport.write(b"c")
    assert pair.counted.writes == [b"a", b"b", b"c"]


async def test_close_sends_what_is_held_before_closing(pair: _Pair) -> None:
    pair.transport.write(b"first ")
    pair.transport.write(b"held ")
    pair.transport.write(b"bytes")
    pair.transport.close()
    assert await pair.reader.read() == b"first held bytes"  # then end of stream
    assert pair.transport.is_closing()


async def test_abort_drops_what_is_held(pair: _Pair) -> None:
    pair.transport.write(b"sent")
    pair.transport.write(b"dropped")
    pair.transport.abort()
    await _next_step()
    assert pair.counted.writes == [b"sent"]
    assert pair.transport.get_write_buffer_size() == 0


async def test_a_window_holds_writes_across_loop_steps_then_sends_them_together() -> None:
    async with _loopback_pair(hold_s=0.05) as held:
        held.transport.write(b"say.delta;")
        await _next_step()
        held.transport.write(b"say.end;")
        await _next_step()
        held.transport.write(b"idle;")
        assert held.counted.writes == [b"say.delta;"]
        received = await held.reader.readexactly(len(b"say.delta;say.end;idle;"))
        assert received == b"say.delta;say.end;idle;"
        assert held.counted.writes == [b"say.delta;", b"say.end;idle;"]
        # After the window, the next write leaves at once again.
        held.transport.write(b"next")
        assert held.counted.writes[-1] == b"next"


async def test_close_inside_a_window_sends_what_is_held() -> None:
    async with _loopback_pair(hold_s=10.0) as held:
        held.transport.write(b"a")
        held.transport.write(b"b")
        held.transport.close()
        assert await held.reader.read() == b"ab"


def test_a_negative_window_is_refused() -> None:
    with pytest.raises(ValueError, match="hold_ms must be >= 0"):
        coalescing_protocol(-1)
    assert coalescing_protocol(2.5).hold_s == 0.0025


async def test_empty_writes_are_ignored(pair: _Pair) -> None:
    pair.transport.write(b"")
    await _next_step()
    assert pair.counted.writes == []


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(st.lists(st.binary(min_size=1, max_size=40), max_size=5), max_size=6))
def test_any_writes_arrive_whole_and_in_order(steps: list[list[bytes]]) -> None:
    async def run() -> None:
        async with _loopback_pair() as pair_:
            expected = b"".join(b"".join(step) for step in steps)
            for step in steps:
                for data in step:
                    pair_.transport.write(data)
                await _next_step()
            pair_.transport.close()
            assert await pair_.reader.read() == expected
            # One write for the first of each step, one for the rest of it.
            assert len(pair_.counted.writes) <= 2 * len(steps)

    asyncio.run(run())

"""A socket with a burst of frames queued takes turns with the others (real server and sockets)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
from npc_support import eventually, serving, stalled_client
from tinygame import GAME
from tinygame.brain import respond
from websockets.frames import Frame, Opcode

from starharness.npc import LimitsSettings, ServerSettings
from starharness.npc.server.connection import Connection
from starharness.npc.server.frame_fairness import PassBudget
from starharness.npc.server.gate import GatedConnection

_BURST = 60
_UNHURRIED = ServerSettings(
    port=0, limits=LimitsSettings(frames_per_second=1_000_000, frame_burst=100_000)
)
"""Thousands of frames on one socket, each handled as it comes: these tests are about reading
and parsing them, not about the per-connection frame rate (test_npc_shedding.py)."""


def _masked(text: str) -> bytes:
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=True, extensions=[])


async def test_a_burst_on_one_socket_does_not_hold_another_sockets_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled: list[str] = []
    handle = Connection._handle  # pyright: ignore[reportPrivateUsage]

    async def spying(self: Connection, text: str) -> None:
        handled.append(text)
        await handle(self, text)

    monkeypatch.setattr(Connection, "_handle", spying)
    async with serving(GAME, tmp_path, _UNHURRIED, responder=respond) as stack:
        # A pass of the loop's budget is spent by the first frame (the real one is 5 ms:
        # sixty small frames would fit in it on a fast machine).
        stack.running.server.frame_budget = PassBudget(0.0)
        burst = await stalled_client(stack.running.port)
        other = await stalled_client(stack.running.port)
        try:
            # Frames the server answers without waiting on anything (an unknown type): held
            # behind nothing but the loop. The whole burst is one write, so the server reads
            # it in one piece; the other socket's frame is written after it.
            burst.write(b"".join(_masked('{"t": "burst"}') for _ in range(_BURST)))
            other.write(_masked('{"t": "other"}'))
            await asyncio.gather(burst.drain(), other.drain())
            await eventually(lambda: len(handled) == _BURST + 1)
        finally:
            for writer in (burst, other):
                writer.close()

    assert handled.count('{"t": "burst"}') == _BURST and handled.count('{"t": "other"}') == 1
    # Once the pass has had its time, the other socket's frame comes within a pass or two;
    # held behind the burst, it came after all of it.
    assert handled.index('{"t": "other"}') < _BURST // 2, "".join(t[7] for t in handled)


async def test_a_pass_budget_starts_with_a_pass_and_is_spent_by_its_time() -> None:
    roomy, none = PassBudget(60.0), PassBudget(0.0)
    assert not roomy.spent() and not none.spent()  # the first frame of a pass always goes
    assert not roomy.spent() and none.spent()
    await asyncio.sleep(0)  # the next pass: each budget starts again
    assert not none.spent()
    assert none.spent()
    assert not roomy.spent()


class _Spy(asyncio.Protocol):
    """Stands in for uvicorn's WebSocket protocol behind the gate: records each delivery."""

    def __init__(self, gate: GatedConnection, inner: asyncio.Protocol, seen: list[_Delivery]):
        self._gate = gate
        self._inner = inner
        self._seen = seen

    def data_received(self, data: bytes) -> None:
        paused = gate_paused(self._gate)
        self._seen.append(_Delivery(len(data), paused))
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


@dataclass(frozen=True)
class _Delivery:
    size: int
    paused: bool


def gate_paused(gate: GatedConnection) -> bool:
    return gate._paused  # pyright: ignore[reportPrivateUsage]


async def test_a_read_of_thousands_of_tiny_frames_is_passed_on_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[_Delivery] = []
    hand_over = GatedConnection.set_protocol

    def spying(self: GatedConnection, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        hand_over(self, _Spy(self, protocol, seen))

    monkeypatch.setattr(GatedConnection, "set_protocol", spying)
    count = 3000
    async with (
        serving(GAME, tmp_path, _UNHURRIED, responder=respond) as stack,
        stack.client(compression=None) as client,
    ):
        # One write of 3,000 frames of 16 bytes: the server reads it in a read or a few.
        frames = [_masked(f'{{"t": "{index % 10}"}}') for index in range(count)]
        client.ws.transport.write(b"".join(frames))
        errors = [await client.recv() for _ in range(count)]
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["t"] == "welcome"  # the connection lives on
    # Every frame was answered, in order, though most waited unparsed for their turn.
    assert [(e["t"], e["code"]) for e in errors] == [("error", "bad_frame")] * count
    assert all(repr(str(i % 10)) in e["message"] for i, e in enumerate(errors)), errors[:3]
    # The WebSocket protocol got the bytes 4 KiB at a time (256 of these frames), and
    # none while it had asked to read no more: at most one slice waits parsed for the app.
    assert sum(d.size for d in seen) >= count * 16
    assert max(d.size for d in seen) <= 4096, max(d.size for d in seen)
    assert not any(d.paused for d in seen)


async def test_frames_of_every_size_split_across_slices_arrive_whole_and_in_order(
    tmp_path: Path,
) -> None:
    # Sizes around the 4 KiB slice and well past it, many tiny ones between: frames cut at
    # every kind of place by the slicing.
    sizes = [1, 4090, 4096, 4097, 9000, 20_000, *([3] * 500), 12_345, 2]
    async with (
        serving(GAME, tmp_path, _UNHURRIED, responder=respond) as stack,
        stack.client() as client,
    ):
        texts = [f'{{"t": "s{index}", "pad": "{"x" * size}"}}' for index, size in enumerate(sizes)]
        client.ws.transport.write(b"".join(_masked(text) for text in texts))
        errors = [await client.recv() for _ in sizes]
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["t"] == "welcome"
    assert all(f"'s{index}'" in e["message"] for index, e in enumerate(errors)), errors[:3]


async def test_a_client_that_leaves_with_frames_held_unparsed_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, _UNHURRIED, responder=respond) as stack:
        # max_queue=None: this client reads on while it closes, so only the server's side is
        # tested (a full queue would stop it reading and the close would time out).
        async with stack.client(max_queue=None) as leaving:
            leaving.ws.transport.write(b"".join(_masked('{"t": "x"}') for _ in range(5000)))
            await leaving.recv()  # the server is answering: most bytes are still held
        # The close frame came after every held frame, and was answered as a clean close.
        assert leaving.ws.close_code == 1000
        await eventually(lambda: not stack.running.server.connections)
        async with stack.client() as other:
            await other.send({"t": "hello", "playerId": "p1"})
            assert (await other.recv())["t"] == "welcome"

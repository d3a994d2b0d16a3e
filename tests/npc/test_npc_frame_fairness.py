"""A socket with a burst of frames queued takes turns with the others (real server and sockets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from npc_support import eventually, serving, stalled_client
from tinygame import GAME
from tinygame.brain import respond
from websockets.frames import Frame, Opcode

from starharness.npc.server.connection import Connection
from starharness.npc.server.pass_budget import PassBudget

_BURST = 60


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
    async with serving(GAME, tmp_path, responder=respond) as stack:
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

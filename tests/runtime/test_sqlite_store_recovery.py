"""Crash recovery of the session stores (SQLite and PostgreSQL): torn tails are dropped, committed
history never is."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap

import pytest

from starharness.runtime.llm.types import AssistantMessage, ToolMessage
from starharness.runtime.session import (
    SessionCorruptError,
    SessionService,
)
from starharness.runtime.session import event_types as ev
from store_support import CHILD_OPEN, StorePlace


async def _two_batches(place: StorePlace) -> None:
    """Session "t": events 0-4 in one write, 5-7 (an unfinished turn) in a later one."""
    service = SessionService(await place.open(max_write_delay_s=3600))
    session = service.create("t")
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "one", "source": "user"})
    session.append(
        ev.ASSISTANT_MESSAGE,
        {"turn": 1, "step": 1, "text": "ok", "tool_calls": [], "finish": "stop"},
    )
    session.append(ev.TURN_END, {"turn": 1, "reason": "completed"})
    session.append(ev.TURN_START, {"turn": 2})
    await service.flush()
    session.append(ev.USER_MESSAGE, {"content": "two", "source": "user"})
    session.append(ev.STEP_START, {"turn": 2, "step": 1})
    session.append(
        ev.ASSISTANT_CHUNK, {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "text": "h"}}
    )
    await service.aclose()


async def _resume(place: StorePlace) -> tuple[list[str], list[int]]:
    service = SessionService(await place.open())
    session = await service.resume("t")
    types = [e.type for e in session.events]
    await service.aclose()
    return types, place.stored_seqs()


async def test_a_damaged_last_row_is_dropped_and_the_turn_closed(store_place: StorePlace) -> None:
    await _two_batches(store_place)
    store_place.sql("UPDATE {events} SET data = substr(data, 1, length(data) - 2) WHERE seq = 7")
    types, stored = await _resume(store_place)
    assert types == [
        ev.TURN_START,
        ev.USER_MESSAGE,
        ev.ASSISTANT_MESSAGE,
        ev.TURN_END,
        ev.TURN_START,
        ev.USER_MESSAGE,
        ev.STEP_START,
        # recovery: seq 7 was the torn chunk; the open step and turn are closed in its place
        ev.STEP_END,
        ev.TURN_END,
    ]
    assert stored == list(range(9))


async def test_a_bit_flip_mid_last_write_drops_from_there_on(store_place: StorePlace) -> None:
    await _two_batches(store_place)
    store_place.sql("UPDATE {events} SET data = replace(data, 'two', 'tWo') WHERE seq = 5")
    types, stored = await _resume(store_place)
    assert types == [
        ev.TURN_START,
        ev.USER_MESSAGE,
        ev.ASSISTANT_MESSAGE,
        ev.TURN_END,
        ev.TURN_START,
        ev.TURN_END,
    ]
    assert stored == list(range(6))


async def test_a_gap_in_the_last_write_starts_the_torn_tail(store_place: StorePlace) -> None:
    await _two_batches(store_place)
    store_place.sql("DELETE FROM {events} WHERE seq = 6")
    types, stored = await _resume(store_place)
    assert types[:6] == [
        ev.TURN_START,
        ev.USER_MESSAGE,
        ev.ASSISTANT_MESSAGE,
        ev.TURN_END,
        ev.TURN_START,
        ev.USER_MESSAGE,
    ]
    assert types[6:] == [ev.TURN_END]
    assert stored == list(range(7))


async def test_damage_in_committed_history_is_refused_untouched(store_place: StorePlace) -> None:
    await _two_batches(store_place)
    store_place.sql('UPDATE {events} SET data = \'{{"content":"forged"}}\' WHERE seq = 1')
    service = SessionService(await store_place.open())
    with pytest.raises(SessionCorruptError, match=r"event 1 fails its checksum.*not a torn tail"):
        await service.resume("t")
    await service.aclose()
    assert store_place.stored_seqs() == list(range(8))


_CRASHING_WRITER = CHILD_OPEN + textwrap.dedent(
    """
    import asyncio, sys
    from starharness.runtime.session import SessionService

    async def main(args: list[str]) -> None:
        service = SessionService(await open_from_argv(args, max_write_delay_s=0.002))
        session = service.create("t")
        for turn in (1, 2, 3):
            session.append("turn/start", {"turn": turn})
            session.append("user/message", {"content": f"q{turn}", "source": "user"})
            session.append("step/start", {"turn": turn, "step": 1})
            session.append("assistant/message", {
                "turn": turn, "step": 1, "text": "", "finish": "tool-calls",
                "tool_calls": [{"id": f"c{turn}", "name": "work", "arguments": "{}"}],
            })
            if turn < 3:
                session.append("tool/result", {
                    "turn": turn, "step": 1, "call_id": f"c{turn}", "name": "work",
                    "content": "done", "is_error": False,
                })
                session.append("step/end", {"turn": turn, "step": 1})
                session.append("turn/end", {"turn": turn, "reason": "completed"})
        await service.flush()
        print("mid-turn", flush=True)
        n = 0
        while True:  # stream chunks until killed, so a write is in flight at the kill
            n += 1
            session.append("assistant/chunk", {
                "turn": 3, "step": 2, "chunk": {"type": "text-delta", "text": "x" * (n % 300)},
            })
            if n % 50 == 0:
                await service.flush()
            if n == 2000:
                print("streaming", flush=True)

    asyncio.run(main(sys.argv[1:]))
    """
)


async def test_sigkill_mid_write_loses_only_unwritten_events(store_place: StorePlace) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CRASHING_WRITER,
        *store_place.locator(),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            assert await process.stdout.readline() == b"mid-turn\n"
            # Let it write for a while so the kill lands among batches.
            assert await process.stdout.readline() == b"streaming\n"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert process.returncode == -signal.SIGKILL

    service = SessionService(await store_place.open())
    session = await service.resume("t")
    events = session.events
    assert [e.seq for e in events] == list(range(len(events)))
    assert len(events) > 2000
    chunks = [e for e in events if e.type == ev.ASSISTANT_CHUNK]
    assert all(chunk.data["chunk"]["type"] == "text-delta" for chunk in chunks)
    # The interrupted third turn: its owed tool call gets an error result, its open step and
    # the turn are closed.
    tail = events[-3:]
    assert [e.type for e in tail] == [ev.TOOL_RESULT, ev.STEP_END, ev.TURN_END]
    assert tail[0].data["call_id"] == "c3" and tail[0].data["is_error"] is True
    assert dict(tail[1].data) == {"turn": 3, "step": 1}
    assert dict(tail[2].data) == {"turn": 3, "reason": "interrupted"}
    messages = session.messages()
    assert isinstance(messages[-2], AssistantMessage) and isinstance(messages[-1], ToolMessage)
    await service.aclose()

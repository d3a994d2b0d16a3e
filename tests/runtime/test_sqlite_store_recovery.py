"""Crash recovery of the SQLite store: torn tails are dropped, committed history never is."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from starharness.runtime.llm.types import AssistantMessage, ToolMessage
from starharness.runtime.session import (
    SessionCorruptError,
    SessionService,
    SqliteStore,
)
from starharness.runtime.session import event_types as ev


async def _two_batches(path: Path) -> None:
    """Session "t": events 0-4 in one write, 5-7 (an unfinished turn) in a later one."""
    service = SessionService(await SqliteStore.open(path, max_write_delay_s=3600))
    session = service.create("t")
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "one", "source": "user"})
    session.append(ev.ASSISTANT_MESSAGE, {"turn": 1, "step": 1, "text": "ok", "finish": "stop"})
    session.append(ev.TURN_END, {"turn": 1, "reason": "completed"})
    session.append(ev.TURN_START, {"turn": 2})
    await service.flush()
    session.append(ev.USER_MESSAGE, {"content": "two", "source": "user"})
    session.append(ev.STEP_START, {"turn": 2, "step": 1})
    session.append(
        ev.ASSISTANT_CHUNK, {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "text": "h"}}
    )
    await service.aclose()


def _sql(path: Path, statement: str, *args: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(statement, args)
    conn.commit()
    conn.close()


def _stored_seqs(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    seqs = [row[0] for row in conn.execute("SELECT seq FROM events ORDER BY seq")]
    conn.close()
    return seqs


async def _resume(path: Path) -> tuple[list[str], list[int]]:
    service = SessionService(await SqliteStore.open(path))
    session = await service.resume("t")
    types = [e.type for e in session.events]
    await service.aclose()
    return types, _stored_seqs(path)


async def test_a_damaged_last_row_is_dropped_and_the_turn_closed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _two_batches(path)
    _sql(path, "UPDATE events SET data = substr(data, 1, length(data) - 2) WHERE seq = 7")
    types, stored = await _resume(path)
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


async def test_a_bit_flip_mid_last_write_drops_from_there_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _two_batches(path)
    _sql(path, "UPDATE events SET data = replace(data, 'two', 'tWo') WHERE seq = 5")
    types, stored = await _resume(path)
    assert types == [
        ev.TURN_START,
        ev.USER_MESSAGE,
        ev.ASSISTANT_MESSAGE,
        ev.TURN_END,
        ev.TURN_START,
        ev.TURN_END,
    ]
    assert stored == list(range(6))


async def test_a_gap_in_the_last_write_starts_the_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _two_batches(path)
    _sql(path, "DELETE FROM events WHERE seq = 6")
    types, stored = await _resume(path)
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


async def test_damage_in_committed_history_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _two_batches(path)
    _sql(path, 'UPDATE events SET data = \'{"content":"forged"}\' WHERE seq = 1')
    service = SessionService(await SqliteStore.open(path))
    with pytest.raises(SessionCorruptError, match=r"event 1 fails its checksum.*not a torn tail"):
        await service.resume("t")
    await service.aclose()
    assert _stored_seqs(path) == list(range(8))


_CRASHING_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from starharness.runtime.session import SessionService, SqliteStore

    async def main(path: str) -> None:
        service = SessionService(await SqliteStore.open(path, max_write_delay_s=0.002))
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
                    "content": "done",
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

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_sigkill_mid_write_loses_only_unwritten_events(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CRASHING_WRITER,
        str(path),
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

    service = SessionService(await SqliteStore.open(path))
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

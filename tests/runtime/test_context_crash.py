"""kill -9 during a compaction and during a child run, then resume: the log is consistent,
the turn is closed, and no summary is duplicated."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from context_support import SPILL_ROW, compaction_row, context_runtime

from starharness.mockllm import (
    ContextOverflow,
    MockLlmServer,
    ScriptedCall,
    Stall,
    Success,
    ToolCalls,
)
from starharness.runtime.context import recover_compaction, verify_seed
from starharness.runtime.context.events import (
    COMPACTION_END,
    COMPACTION_START,
    COMPACTION_SUMMARY,
    SUBAGENT_END,
    SUBAGENT_START,
    SUMMARY_SOURCE,
)
from starharness.runtime.loop import AGENTS
from starharness.runtime.session import SESSIONS, Session
from starharness.runtime.session import event_types as ev

CHILD = Path(__file__).parent / "context_crash_child.py"
DELEGATE_ROW = {
    "id": "delegate",
    "plugin": "starharness.runtime.context:DelegatePlugin",
    "config": {"tools": []},
}
ROWS = [SPILL_ROW, compaction_row(), DELEGATE_ROW]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def _stored_types(db: Path, session_id: str) -> list[str]:
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
    try:
        rows = conn.execute(
            "SELECT type FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()
    return [row[0] for row in rows]


async def _run_and_kill(
    base_url: str, home: Path, db: Path, mode: str, ready: Callable[[], bool]
) -> None:
    env = {**os.environ, "STAR_HARNESS_HOME": str(home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        base_url,
        str(home),
        str(db),
        mode,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        for _ in range(6000):  # a loaded machine may take a while to start the process
            if ready():
                break
            if process.returncode is not None:
                raise AssertionError("the child process ended before the crash point")
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the crash point was never reached")
        process.send_signal(signal.SIGKILL)
        await process.wait()
        assert process.returncode == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.slow
async def test_kill_during_compaction_then_resume(home: Path) -> None:
    db = home / "crash.db"
    async with MockLlmServer() as mock:
        mock.script(
            "crash-compaction",
            [
                Success(text="first answer"),
                ContextOverflow(),
                Stall(phase="before_headers"),  # the summarizer never answers: killed here
                ContextOverflow(),
                Success(text="the one summary"),
                Success(text="after the crash"),
            ],
        )

        def ready() -> bool:
            return len(mock.requests) == 3 and COMPACTION_START in _stored_types(
                db, "crash-compaction"
            )

        await _run_and_kill(mock.base_url, home, db, "compaction", ready)
        async with context_runtime(mock.base_url, home, ROWS, store="sqlite", path=db) as rt:
            handle = await rt.ctx.get(AGENTS).resume("crash-compaction")
            session = handle.agent.session
            after_crash = list(session.events)
            ends = [e for e in after_crash if e.type == COMPACTION_END]
            assert [e.data["outcome"] for e in ends] == ["interrupted"]
            assert not [e for e in after_crash if e.type == COMPACTION_SUMMARY]
            turn_ends = [e for e in after_crash if e.type == ev.TURN_END]
            assert [e.data["reason"] for e in turn_ends] == ["completed", "interrupted"]
            # The compaction closes before the turn does.
            assert after_crash[-1].type == ev.TURN_END
            assert after_crash[-2].type in (COMPACTION_END, ev.STEP_END)
            assert "hello" in json.dumps(
                [
                    m.content
                    for m in session.messages()  # type: ignore[union-attr]
                    if m.role == "user"
                ]
            )
            handle.agent.followup("again")
            await handle.agent.when_idle()
            events = list(session.events)
            await handle.dispose()
        mock.assert_complete()
    summaries = [e for e in events if e.type == COMPACTION_SUMMARY]
    assert [e.data["text"] for e in summaries] == ["the one summary"]
    placed = [e for e in events if e.type == ev.USER_MESSAGE and e.data["source"] == SUMMARY_SOURCE]
    assert len(placed) == 1
    assert events[-1].type == ev.TURN_END and events[-1].data["reason"] == "completed"
    # A second resume finds nothing left to close.
    again = Session("again", events)
    assert recover_compaction(again) == []


def test_a_summary_logged_before_the_crash_is_put_in_place_once() -> None:
    session = Session("s")
    session.append(ev.TURN_START, {"turn": 1})
    for text in ("a", "b", "c"):
        session.append(ev.USER_MESSAGE, {"content": text})
    session.append(COMPACTION_START, {"id": "k", "trigger": "pressure"})
    session.append(
        COMPACTION_SUMMARY,
        {"id": "k", "text": "a and b", "start": 1, "end": 2, "messages": 2, "model": "m"},
    )
    appended = recover_compaction(session)
    assert [e.type for e in appended] == [ev.USER_MESSAGE, COMPACTION_END]
    assert [m.content for m in session.messages()] == [  # type: ignore[union-attr]
        "Summary of the earlier conversation (older messages were compacted):\n\na and b",
        "c",
    ]
    assert recover_compaction(session) == []


@pytest.mark.slow
async def test_kill_during_a_child_run_then_resume(home: Path) -> None:
    db = home / "crash.db"
    child_requests: list[str] = []

    def child_seen() -> bool:
        child_requests[:] = [c for r in mock.requests if ".sub-" in (c := r.conversation or "")]
        if not child_requests or SUBAGENT_START not in _stored_types(db, "crash-delegate"):
            return False
        # The child's own open turn must be durable too (its seed holds whole turns only), or
        # the kill lands before its first batch and there is no turn to close on resume.
        stored = _stored_types(db, child_requests[0])
        return stored.count(ev.TURN_START) > stored.count(ev.TURN_END)

    async with MockLlmServer() as mock:
        delegate = json.dumps({"task": "look into it"})
        mock.script(
            "crash-delegate",
            [
                Success(text="hi"),
                ToolCalls(calls=[ScriptedCall(id="d1", name="delegate", arguments=delegate)]),
            ],
        )
        mock.script_next([Stall(phase="before_headers")])  # the child's first request
        await _run_and_kill(mock.base_url, home, db, "delegate", child_seen)
        child_id = child_requests[0]
        mock.script(child_id, [Success(text="resumed child answer")])
        async with context_runtime(mock.base_url, home, ROWS, store="sqlite", path=db) as rt:
            parent = await rt.ctx.get(SESSIONS).resume("crash-delegate")
            parent_events = list(parent.events)
            handle = await rt.ctx.get(AGENTS).resume(child_id)
            child = handle.agent.session
            await verify_seed(rt.ctx, child)
            seed_length = child.meta["seed_length"]
            resumed = list(child.events)
            handle.agent.followup("finish the task")
            await handle.agent.when_idle()
            child_events = list(child.events)
            await handle.dispose()
    # The parent: its delegate call got an interrupted result, the subagent an end, the turn
    # closed.
    result = [e for e in parent_events if e.type == ev.TOOL_RESULT][-1]
    assert result.data["call_id"] == "d1" and result.data["is_error"] is True
    assert [e.data["reason"] for e in parent_events if e.type == SUBAGENT_END] == ["interrupted"]
    assert parent_events[-1].type == ev.TURN_END
    assert parent_events[-1].data["reason"] == "interrupted"
    # The child: seeded from storage with the parent's completed turn, its turn closed, and
    # it carries on where it was.
    assert resumed[seed_length - 1].type == ev.TURN_END
    assert resumed[-1].type == ev.TURN_END and resumed[-1].data["reason"] == "interrupted"
    answer = [e for e in child_events if e.type == ev.ASSISTANT_MESSAGE][-1]
    assert answer.data["text"] == "resumed child answer"
    last_request = [r for r in mock.requests if r.conversation == child_id][-1]
    contents = [m.get("content") for m in last_request.messages]
    assert "hi" in contents and "look into it" in contents

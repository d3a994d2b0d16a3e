"""Replay byte for byte: a 200-turn session with spills, compactions, a fork and goal changes;
every request rebuilt from the stored log equals the request that was sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from context_support import (
    SPILL_ROW,
    assert_rebuilt_equals_sent,
    compaction_row,
    context_runtime,
    is_summary_request,
    produce_call,
    register_blob_tool,
    summary_step,
)
from loop_support import create_agent

from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.context import WorkBook, verify_seed
from starharness.runtime.context.events import (
    COMPACTION_SUMMARY,
    GOAL_CHANGE,
    SPILL_STORED,
    SUBAGENT_START,
)
from starharness.runtime.session import SESSIONS
from starharness.runtime.session import event_types as ev

TURNS = 200
_TASK = re.compile(r"^task (\d+):")
ROWS = [
    SPILL_ROW,
    compaction_row(context_window=24_000),
    {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin"},
    {
        "id": "delegate",
        "plugin": "starharness.runtime.context:DelegatePlugin",
        "config": {"tools": ["produce", "read_spilled"]},
    },
]


def size_of(turn: int) -> int:
    return 120_000 if turn % 25 == 0 else 1_000 + (turn * 37) % 5_000


def player(request: ChatRequest) -> Step:
    if is_summary_request(request):
        return summary_step(request)
    last = request.messages[-1]
    if ".sub-" in request.conversation:
        if last.role == "user":
            return produce_call(2_000, "child-p")
        return Success(text="child report: produced 2000 characters")
    if last.role == "user":
        # The turn's task, then maybe the goal as context after it.
        tasks = [m.text for m in request.messages if m.role == "user" and _TASK.match(m.text)]
        found = _TASK.match(tasks[-1])
        assert found is not None
        turn = int(found.group(1))
        if turn in (50, 150):
            goal = {"goal": f"goal from turn {turn}", "expected_revision": 0 if turn == 50 else 1}
            return ToolCalls(
                calls=[ScriptedCall(id=f"g{turn}", name="set_goal", arguments=json.dumps(goal))]
            )
        if turn == 100:
            task = {"task": "produce a sample and report its size"}
            return ToolCalls(
                calls=[ScriptedCall(id=f"d{turn}", name="delegate", arguments=json.dumps(task))]
            )
        return produce_call(size_of(turn), f"p{turn}")
    call_id = last.tool_call_id or ""
    if call_id.startswith("g"):
        turn = int(call_id[1:])
        return produce_call(size_of(turn), f"p{turn}")
    return Success(text=f"done with {call_id}")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.mark.slow
async def test_a_200_turn_session_rebuilds_every_request_byte_for_byte(home: Path) -> None:
    db = home / "long.db"
    async with MockLlmServer(responder=player, keep_conversations=8) as mock:
        async with context_runtime(mock.base_url, home, ROWS, store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "long", register_blob_tool)
            for turn in range(1, TURNS + 1):
                handle.agent.followup(f"task {turn}: " + "context " * 12)
                await handle.agent.when_idle()
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        requests = list(mock.requests)
    assert [e.data["reason"] for e in rec.of(ev.TURN_END)] == ["completed"] * TURNS

    async with context_runtime(mock.base_url, home, ROWS, store="sqlite", path=db) as rt:
        stored = await rt.ctx.get(SESSIONS).resume("long")
        events = list(stored.events)
        (start,) = [e for e in events if e.type == SUBAGENT_START]
        child = await rt.ctx.get(SESSIONS).resume(start.data["child"])
        await verify_seed(rt.ctx, child)
        child_events = list(child.events)
        state = WorkBook().state(stored)

    # Every 25th turn spills, but turn 100 delegates instead.
    assert len([e for e in events if e.type == SPILL_STORED]) == TURNS // 25 - 1
    assert len([e for e in events if e.type == COMPACTION_SUMMARY]) >= 2
    assert [e.data["revision"] for e in events if e.type == GOAL_CHANGE] == [1, 2]
    assert (state.goal, state.goal_revision) == ("goal from turn 150", 2)
    parent = [
        r.body
        for r in requests
        if r.conversation == "long"
        and "compact the history" not in r.body["messages"][0]["content"]
    ]
    children = [r.body for r in requests if ".sub-" in (r.conversation or "")]
    # Two requests a turn, three on the turns that change the goal.
    assert len(parent) == 2 * TURNS + 2 and len(children) == 2
    assert_rebuilt_equals_sent(events, parent)
    assert_rebuilt_equals_sent(child_events, children, after=start.data["seed_length"])

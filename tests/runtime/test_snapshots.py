"""Snapshot tests: a recorded conversation (spill, compaction, a plan) replays without a model
and sends exactly the recorded requests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from context_support import (
    SPILL_ROW,
    compaction_row,
    context_runtime,
    is_summary_request,
    produce_call,
    register_blob_tool,
    summary_step,
)
from loop_support import create_agent
from snapshot_support import SNAPSHOTS, answers_from_log, check_snapshot, diff_requests

from starharness.mockllm import ChatRequest, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.session import SessionEvent

GOALS_ROW = {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin"}
SIZES = (60_000, 3_000, 9_000, 3_000, 60_000, 2_000, 3_000, 4_000)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def model(request: ChatRequest) -> Step:
    """Stands in for a model while recording."""
    if is_summary_request(request):
        return summary_step(request)
    last = request.messages[-1]
    if last.role == "user" and last.text.startswith("task 0"):
        plan = {
            "items": [{"id": "1", "text": "produce", "status": "in_progress"}],
            "expected_revision": 0,
        }
        return ToolCalls(
            calls=[ScriptedCall(id="plan", name="todo_write", arguments=json.dumps(plan))]
        )
    if last.role == "user" or (last.role == "tool" and last.tool_call_id == "plan"):
        # The task's own number (older tasks may be summarized away; the newest never is).
        newest = [
            m.text for m in request.messages if m.role == "user" and m.text.startswith("task")
        ]
        turn = int(newest[-1].split(":", 1)[0].removeprefix("task "))
        return produce_call(SIZES[turn % len(SIZES)], f"p{request.turn}")
    return Success(text=f"step {request.turn} done")


def scenario(home: Path) -> object:
    async def run(base_url: str) -> Sequence[SessionEvent]:
        rows = [SPILL_ROW, compaction_row(context_window=5_000), GOALS_ROW]
        async with context_runtime(base_url, home, rows) as rt:
            handle, _ = await create_agent(rt.ctx, "snap", register_blob_tool)
            for turn in range(len(SIZES)):
                handle.agent.followup(f"task {turn}: " + "words " * 150)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        return events

    return run


async def test_the_recorded_context_session_replays_request_for_request(home: Path) -> None:
    mode = await check_snapshot("context_session", "snap", scenario(home), model)  # type: ignore[arg-type]
    record = json.loads((SNAPSHOTS / "context_session.json").read_text(encoding="utf-8"))
    bodies = json.dumps(record["requests"])
    # The recording holds what the scenario is about: spills, a summary, a plan.
    assert "read_spilled(spill=1" in bodies and "read_spilled(spill=2" in bodies
    assert "Summary of the earlier conversation" in bodies
    assert "Plan (revision 1)" in bodies
    assert mode in ("recorded", "replayed")


def test_a_changed_request_is_shown_as_a_diff() -> None:
    old = [{"messages": [{"role": "user", "content": "a"}]}]
    new = [{"messages": [{"role": "user", "content": "b"}]}]
    problem = diff_requests(old, new)
    assert problem is not None and "request 0 differs" in problem
    assert '-   "content": "a",' in problem or '-   "content": "a"' in problem
    assert diff_requests(old, old) is None
    assert "2 requests were sent" in (diff_requests(old, old * 2) or "")


def test_answers_come_from_the_log_in_order() -> None:
    from starharness.runtime.session import Session
    from starharness.runtime.session import event_types as ev

    session = Session("a")
    session.append(
        ev.ASSISTANT_MESSAGE,
        {"text": "", "tool_calls": [{"id": "c", "name": "t", "arguments": "{}"}]},
    )
    session.append(ev.ASSISTANT_MESSAGE, {"text": "partial", "interrupted": True})
    session.append(ev.ASSISTANT_MESSAGE, {"text": "done"})
    assert answers_from_log(session.events) == [
        {"behaviour": "tool_call_success", "calls": [{"id": "c", "name": "t", "arguments": "{}"}]},
        {"behaviour": "success", "text": "done"},
    ]

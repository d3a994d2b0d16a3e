"""Goals and plans: folded from the log, compare-and-set on revision, shown to the model as
logged context, and the same after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_support import context_runtime
from loop_support import create_agent

from starharness.mockllm import MockLlmServer, ScriptedCall, Success, ToolCalls
from starharness.runtime.context import WorkBook
from starharness.runtime.context.events import GOAL_CHANGE, PLAN_CHANGE
from starharness.runtime.loop import AGENTS
from starharness.runtime.session import SESSIONS
from starharness.runtime.session import event_types as ev

GOALS_ROW = {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _todo(expected: int, *statuses: str) -> ToolCalls:
    items = [
        {"id": str(i + 1), "text": f"step {i + 1}", "status": s} for i, s in enumerate(statuses)
    ]
    args = json.dumps({"items": items, "expected_revision": expected})
    return ToolCalls(calls=[ScriptedCall(name="todo_write", arguments=args)])


async def test_plans_and_goals_use_compare_and_set_and_survive_a_restart(home: Path) -> None:
    db = home / "s.db"
    goal = json.dumps({"goal": "ship the level", "expected_revision": 0})
    async with MockLlmServer() as mock:
        mock.script(
            "g1",
            [
                ToolCalls(calls=[ScriptedCall(name="set_goal", arguments=goal)]),
                _todo(0, "in_progress", "pending"),
                _todo(0, "done", "done"),  # stale: the plan is at revision 1 now
                _todo(1, "done", "in_progress"),
                Success(text="planned"),
                Success(text="still planned"),
            ],
        )
        async with context_runtime(mock.base_url, home, [GOALS_ROW], store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "g1")
            handle.agent.followup("plan it")
            await handle.agent.when_idle()
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        results = [e.data for e in rec.of(ev.TOOL_RESULT)]
        assert results[0]["content"].startswith("Goal (revision 1, active): ship the level")
        assert "[~] 1. step 1" in results[1]["content"]
        assert results[2]["is_error"] is True
        assert "at revision 1, not 0" in results[2]["content"]
        assert "Plan (revision 2)" in results[3]["content"]
        assert [e.data["revision"] for e in rec.of(PLAN_CHANGE)] == [1, 2]
        assert [e.data["revision"] for e in rec.of(GOAL_CHANGE)] == [1]

        async with context_runtime(mock.base_url, home, [GOALS_ROW], store="sqlite", path=db) as rt:
            handle = await rt.ctx.get(AGENTS).resume("g1")
            state = WorkBook().state(handle.agent.session)
            assert (state.goal, state.goal_revision, state.plan_revision) == (
                "ship the level",
                1,
                2,
            )
            assert [i.status for i in state.plan] == ["done", "in_progress"]
            handle.agent.followup("go on")
            await handle.agent.when_idle()
            await handle.dispose()
        # The next turn's request carries the folded goal and plan as logged context.
        last = mock.requests[-1].messages
        context = [m["content"] for m in last if "Current goal" in str(m.get("content"))]
        assert context and "[~] 2. step 2" in context[-1]
        mock.assert_complete()

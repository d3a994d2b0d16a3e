"""Forks and delegate: a child agent seeded with the parent's completed turns, with narrowed
tools, persisted with its parent and boundary; its answer comes back as the tool result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_support import assert_rebuilt_equals_sent, context_runtime
from loop_support import create_agent
from pydantic import BaseModel

from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.context import ForkError, completed_prefix, fork, verify_seed
from starharness.runtime.context.events import SUBAGENT_END, SUBAGENT_START
from starharness.runtime.kernel import Context
from starharness.runtime.session import SESSIONS
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool

DELEGATE_ROW = {
    "id": "delegate",
    "plugin": "starharness.runtime.context:DelegatePlugin",
    "config": {"tools": ["lookup", "shout"]},
}


class Key(BaseModel):
    key: str


def _global_tools(ctx: Context) -> None:
    async def lookup(args: Key, run: ToolRunContext) -> str:
        return f"{args.key} is 42"

    async def shout(args: Key, run: ToolRunContext) -> str:
        return args.key.upper()

    async def secret(args: Key, run: ToolRunContext) -> str:
        return "never for children"

    for name, fn in (("lookup", lookup), ("shout", shout), ("secret", secret)):
        ctx.get(TOOLS).register(define_tool(name, f"The {name} tool.", Key, fn))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _player(request: ChatRequest) -> Step:
    last = request.messages[-1]
    if ".sub-" in request.conversation:
        if last.role == "user":
            return ToolCalls(calls=[ScriptedCall(id="k1", name="lookup", arguments='{"key": "X"}')])
        return Success(text=f"child report: {last.text}")
    if last.role == "user" and last.text == "hello":
        return Success(text="hi")
    if last.role == "user":
        args = json.dumps({"task": "find X", "tools": ["lookup"]})
        return ToolCalls(calls=[ScriptedCall(id="d1", name="delegate", arguments=args)])
    return Success(text=f"the subagent says: {last.text}")


async def test_delegate_runs_a_seeded_child_with_narrowed_tools(home: Path) -> None:
    db = home / "s.db"
    async with MockLlmServer(responder=_player) as mock:
        async with context_runtime(
            mock.base_url, home, [DELEGATE_ROW], store="sqlite", path=db
        ) as rt:
            _global_tools(rt.ctx)
            handle, rec = await create_agent(rt.ctx, "par")
            for text in ("hello", "investigate X"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            parent_events = list(handle.agent.session.events)
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
            infos = {info.id: info for info in await rt.ctx.get(SESSIONS).stored()}
        requests = list(mock.requests)
    parent_requests = [r for r in requests if ".sub-" not in (r.conversation or "")]
    child_requests = [r for r in requests if ".sub-" in (r.conversation or "")]
    assert rec.of(ev.TURN_END)[-1].data["reason"] == "completed"
    (start,) = [e for e in parent_events if e.type == SUBAGENT_START]
    (end,) = [e for e in parent_events if e.type == SUBAGENT_END]
    child_id = start.data["child"]
    assert end.data["status"] == "ok"
    result = [e for e in parent_events if e.type == ev.TOOL_RESULT][-1]
    assert result.data["content"] == "child report: X is 42"
    # The child saw the parent's first, completed turn and not the turn that delegated.
    child_first = [m.get("content") for m in child_requests[0].messages]
    assert "hello" in child_first and "hi" in child_first
    assert "investigate X" not in child_first
    assert [t["function"]["name"] for t in child_requests[0].body["tools"]] == ["lookup"]
    # Persisted with its parent and boundary.
    meta = infos[child_id].meta
    assert meta["parent_session"] == "par"
    assert meta["seed_length"] == start.data["seed_length"] > 0
    async with context_runtime(mock.base_url, home, [DELEGATE_ROW], store="sqlite", path=db) as rt:
        child = await rt.ctx.get(SESSIONS).resume(child_id)
        await verify_seed(rt.ctx, child)
        assert list(child.events[: meta["seed_length"]]) == parent_events[: meta["seed_length"]]
        assert_rebuilt_equals_sent(
            list(child.events), [r.body for r in child_requests], after=meta["seed_length"]
        )
    assert_rebuilt_equals_sent(parent_events, [r.body for r in parent_requests])


async def test_a_fork_boundary_must_end_a_completed_turn(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("f1", [Success(text="one")])
        async with context_runtime(mock.base_url, home, []) as rt:
            handle, _ = await create_agent(rt.ctx, "f1")
            handle.agent.followup("go")
            await handle.agent.when_idle()
            session = handle.agent.session
            with pytest.raises(ForkError, match="not the end of a completed turn"):
                await fork(rt.ctx, session, "f1.child", boundary=2)
            child = await fork(rt.ctx, session, "f1.child2")
            assert len(child.agent.session.events) == completed_prefix(session)
            await child.dispose()
            await handle.dispose()

"""Spill: oversized tool results are stored whole in the log; the model reads a preview with a
locator and pages through the rest with read_spilled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_support import (
    SPILL_ROW,
    assert_rebuilt_equals_sent,
    context_runtime,
    make_blob,
    produce_call,
    register_blob_tool,
    spill_id_in,
)
from loop_support import create_agent

from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.context import READ_TOOL, spilled_content
from starharness.runtime.context.events import SPILL_STORED
from starharness.runtime.session import SESSIONS
from starharness.runtime.session import event_types as ev

BIG = 200_000


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _player(request: ChatRequest) -> Step:
    last = request.messages[-1]
    if last.role == "user":
        return produce_call(BIG, "c-big")
    spill = spill_id_in(last.text)
    if last.tool_call_id == "c-big" and spill is not None:
        args = json.dumps({"spill": spill, "offset": 100_000, "length": 64})
        return ToolCalls(calls=[ScriptedCall(id="c-read", name=READ_TOOL, arguments=args)])
    return Success(text="read it")


async def test_a_big_result_is_spilled_whole_and_read_back_by_range(home: Path) -> None:
    async with MockLlmServer(responder=_player) as mock:
        async with context_runtime(
            mock.base_url, home, [SPILL_ROW], store="sqlite", path=home / "s.db"
        ) as rt:
            handle, rec = await create_agent(rt.ctx, "sp1", register_blob_tool)
            handle.agent.followup("make a big one")
            await handle.agent.when_idle()
            session = handle.agent.session
            events = list(session.events)
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        sent = [r.body for r in mock.requests]
        async with context_runtime(
            mock.base_url, home, [SPILL_ROW], store="sqlite", path=home / "s.db"
        ) as rt:
            stored = await rt.ctx.get(SESSIONS).resume("sp1")
            stored_events = list(stored.events)
    assert rec.of(ev.TURN_END)[-1].data["reason"] == "completed"
    whole = make_blob(BIG, BIG)
    spills = [e for e in events if e.type == SPILL_STORED]
    assert len(spills) == 1
    assert spills[0].data["content"] == whole  # stored whole
    assert spills[0].data["id"] == 1
    assert spilled_content(stored, 1) == whole  # and persisted
    big_result, read_result = rec.of(ev.TOOL_RESULT)
    preview = big_result.data["content"]
    assert len(preview.encode()) < 50_000
    assert preview.startswith(whole[:2000]) and preview.endswith(whole[-1000:])
    assert "spill 1: call read_spilled(spill=1" in preview
    assert read_result.data["content"].endswith(whole[100_000:100_064])
    # The model saw only the preview, and the log rebuilds every request byte for byte.
    assert all(len(json.dumps(body)) < 60_000 for body in sent)
    assert_rebuilt_equals_sent(stored_events, sent)


async def test_reading_a_spill_that_does_not_exist_is_a_clear_tool_error(home: Path) -> None:
    args = json.dumps({"spill": 999, "offset": 0, "length": 10})
    async with MockLlmServer() as mock:
        mock.script(
            "sp2",
            [ToolCalls(calls=[ScriptedCall(name=READ_TOOL, arguments=args)]), Success(text="ok")],
        )
        async with context_runtime(mock.base_url, home, [SPILL_ROW]) as rt:
            handle, rec = await create_agent(rt.ctx, "sp2")
            handle.agent.followup("read")
            await handle.agent.when_idle()
            await handle.dispose()
    result = rec.of(ev.TOOL_RESULT)[0]
    assert result.data["is_error"] is True
    assert "no spill 999" in result.data["content"]

"""The agent loop end to end: the real provider client against the mock LLM over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from loop_support import Recorder, create_agent, runtime_for
from pydantic import BaseModel

from starharness.mockllm import (
    MockLlmServer,
    RateLimit,
    ScriptedCall,
    ServerFault,
    Stall,
    StreamDisconnect,
    Success,
    ToolCalls,
)
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import UserMessage
from starharness.runtime.llm.wire import to_wire_messages
from starharness.runtime.loop import AGENTS
from starharness.runtime.session import SESSIONS, rebuild_requests
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool


class EchoArgs(BaseModel):
    text: str


class AddArgs(BaseModel):
    a: int
    b: int


def _echo_tools(ctx: Context, seen: list[str]) -> None:
    async def echo(args: EchoArgs, run: ToolRunContext) -> str:
        seen.append(args.text)
        return f"echoed {args.text}"

    async def add(args: AddArgs, run: ToolRunContext) -> dict[str, int]:
        await asyncio.sleep(0.01 if args.a == 1 else 0)
        seen.append(f"add {args.a}")
        return {"sum": args.a + args.b}

    async def boom(args: EchoArgs, run: ToolRunContext) -> str:
        raise RuntimeError(f"tool exploded on {args.text}")

    ctx.get(TOOLS).register(define_tool("echo", "Echo the text back.", EchoArgs, echo))
    ctx.get(TOOLS).register(
        define_tool("add", "Add two ints.", AddArgs, add, concurrency_safe=True)
    )
    ctx.get(TOOLS).register(define_tool("boom", "Always fails.", EchoArgs, boom))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


async def _turn(recorder: Recorder, handle: object, text: str) -> dict[str, object]:
    from starharness.runtime.loop import AgentHandle

    assert isinstance(handle, AgentHandle)
    handle.agent.followup(UserMessage(text))
    await handle.agent.when_idle()
    end = recorder.of(ev.TURN_END)[-1]
    return dict(end.data)


async def test_streamed_text_turn(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("s1", [Success(text="Hello there, traveller.", chunk_size=4, delay_ms=2)])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s1")
            end = await _turn(rec, handle, "hi")
            assert end["reason"] == "completed"
            deltas = [
                e.data["chunk"]["text"]
                for e in rec.of(ev.ASSISTANT_CHUNK)
                if e.data["chunk"]["type"] == "text-delta"
            ]
            assert len(deltas) > 1
            assert "".join(deltas) == "Hello there, traveller."
            msg = rec.of(ev.ASSISTANT_MESSAGE)[-1]
            assert msg.data["text"] == "Hello there, traveller."
            assert rec.types()[0] == ev.TURN_START
            assert mock.requests[0].headers["x-star-harness-session"] == "s1"
            await handle.dispose()
        mock.assert_complete()


async def test_tool_call_split_mid_escape_then_text(home: Path) -> None:
    arguments = json.dumps({"text": 'say "\u00e9\U0001f680" \\ now'}, ensure_ascii=True)
    async with MockLlmServer() as mock:
        mock.script(
            "s2",
            [
                ToolCalls(calls=[ScriptedCall(name="echo", arguments=arguments)], fragment_size=1),
                Success(text="done"),
            ],
        )
        seen: list[str] = []
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s2", lambda c: _echo_tools(c, seen))
            end = await _turn(rec, handle, "echo please")
            assert end["reason"] == "completed"
            assert seen == ['say "\u00e9\U0001f680" \\ now']
            call = rec.of(ev.TOOL_CALL)[0]
            assert call.data["arguments"] == arguments
            result = rec.of(ev.TOOL_RESULT)[0]
            assert result.data["content"] == 'echoed say "\u00e9\U0001f680" \\ now'
            second = mock.requests[1].messages
            assert second[-1]["role"] == "tool"
            assert second[-1]["tool_call_id"] == call.data["call_id"]
            await handle.dispose()
        mock.assert_complete()


async def test_parallel_tool_calls_keep_call_order(home: Path) -> None:
    calls = [
        ScriptedCall(id="c1", name="add", arguments=json.dumps({"a": 1, "b": 2})),
        ScriptedCall(id="c2", name="add", arguments=json.dumps({"a": 2, "b": 3})),
    ]
    async with MockLlmServer() as mock:
        mock.script("s3", [ToolCalls(calls=calls, fragment_size=3), Success(text="sums")])
        seen: list[str] = []
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s3", lambda c: _echo_tools(c, seen))
            await _turn(rec, handle, "add")
            # The slower first call finished last, yet results are logged in call order.
            assert seen == ["add 2", "add 1"]
            results = rec.of(ev.TOOL_RESULT)
            assert [r.data["call_id"] for r in results] == ["c1", "c2"]
            assert [json.loads(r.data["content"])["sum"] for r in results] == [3, 5]
            await handle.dispose()


async def test_tool_raising_and_invalid_arguments_reach_the_model(home: Path) -> None:
    calls = [
        ScriptedCall(id="c1", name="boom", arguments=json.dumps({"text": "x"})),
        ScriptedCall(id="c2", name="add", arguments=json.dumps({"a": "not a number", "b": 1})),
        ScriptedCall(id="c3", name="missing", arguments=json.dumps({})),
    ]
    async with MockLlmServer() as mock:
        mock.script("s4", [ToolCalls(calls=calls), Success(text="sorry")])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s4", lambda c: _echo_tools(c, []))
            end = await _turn(rec, handle, "go")
            assert end["reason"] == "completed"
            boom, bad, missing = rec.of(ev.TOOL_RESULT)
            assert boom.data["content"] == "Error: tool exploded on x"
            assert boom.data["is_error"] is True
            assert "RuntimeError" in boom.data["traceback"]
            assert bad.data["content"].startswith("Error: ")
            assert "'a'" in bad.data["content"]
            assert "missing" in missing.data["content"]
            tool_messages = [m for m in mock.requests[1].messages if m["role"] == "tool"]
            assert tool_messages[0]["content"] == "Error: tool exploded on x"
            await handle.dispose()


async def test_retry_after_429_and_500_is_logged(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "s5",
            [RateLimit(retry_after_s=0.01), ServerFault(), Success(text="finally")],
        )
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s5")
            end = await _turn(rec, handle, "hi")
            assert end["reason"] == "completed"
            retries = rec.of(ev.LLM_RETRY)
            assert [r.data["attempt"] for r in retries] == [1, 2]
            assert "429" in retries[0].data["error"] or "rate" in retries[0].data["error"].lower()
            assert rec.of(ev.ASSISTANT_MESSAGE)[-1].data["text"] == "finally"
            assert len(mock.requests) == 3
            await handle.dispose()


async def test_stream_cut_midway_is_retried_and_the_partial_discarded(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("s6", [StreamDisconnect(partial_text="half an ans"), Success(text="whole")])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s6")
            end = await _turn(rec, handle, "hi")
            assert end["reason"] == "completed"
            retry = rec.of(ev.LLM_RETRY)[0]
            assert retry.data["after_output"] is True
            assert rec.of(ev.ASSISTANT_MESSAGE)[-1].data["text"] == "whole"
            # Only the final answer is model-visible.
            assert [m.text for m in handle.agent.session.messages() if m.role == "assistant"] == [
                "whole"
            ]
            await handle.dispose()


async def test_an_llm_failure_after_retries_ends_the_turn_with_error(home: Path) -> None:
    async with MockLlmServer(repeat_last=True) as mock:
        mock.script("s7", [ServerFault()])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s7")
            end = await _turn(rec, handle, "hi")
            assert end["reason"] == "error"
            assert end["kind"] == "ServerError"
            # The agent is usable again afterwards.
            assert handle.agent.status == "idle"
            await handle.dispose()


async def test_cancel_mid_turn_aborts_and_keeps_history_valid(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "s8",
            [
                Stall(phase="mid_stream", partial_text="I was say", duration_ms=5000),
                Success(text="ok"),
            ],
        )
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "s8")
            agent = handle.agent
            agent.followup("talk")
            await asyncio.wait_for(rec.streaming.wait(), 10)
            agent.cancel()
            await agent.when_idle()
            end = rec.of(ev.TURN_END)[-1]
            assert end.data["reason"] == "aborted"
            assert end.data["cause"] == "user"
            partial = rec.of(ev.ASSISTANT_MESSAGE)[-1]
            assert partial.data["interrupted"] is True
            # A new turn works and its request carries the interrupted partial text.
            end2 = await _turn(rec, handle, "again")
            assert end2["reason"] == "completed"
            await handle.dispose()


async def test_requests_rebuild_byte_for_byte_from_a_persisted_log(home: Path) -> None:
    db = home / "sessions.db"
    async with MockLlmServer() as mock:
        mock.script(
            "s9",
            [
                ToolCalls(calls=[ScriptedCall(name="echo", arguments=json.dumps({"text": "a"}))]),
                Success(text="first done"),
                Success(text="second"),
            ],
        )
        async with runtime_for(mock.base_url, home, store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "s9", lambda c: _echo_tools(c, []))
            await _turn(rec, handle, "one")
            await _turn(rec, handle, "two")
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        sent = [r.body for r in mock.requests]

        async with runtime_for(mock.base_url, home, store="sqlite", path=db) as rt:
            resumed = await rt.ctx.get(SESSIONS).resume("s9")
            rebuilt = rebuild_requests(resumed.events)
            assert len(rebuilt) == len(sent) == 3
            for (header, messages), body in zip(rebuilt, sent, strict=True):
                assert header is not None
                wire = to_wire_messages(header["system"], messages)
                assert json.dumps(wire) == json.dumps(body["messages"])
                assert [t["function"]["name"] for t in body["tools"]] == [
                    t["name"] for t in header["tools"]
                ]


async def test_resume_from_sqlite_continues_the_conversation(home: Path) -> None:
    db = home / "sessions.db"
    async with MockLlmServer() as mock:
        mock.script("s10", [Success(text="remembered"), Success(text="still here")])
        async with runtime_for(mock.base_url, home, store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "s10")
            await _turn(rec, handle, "my name is Ada")
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        async with runtime_for(mock.base_url, home, store="sqlite", path=db) as rt:
            rec2 = Recorder()
            from starharness.runtime.loop import SESSION_EVENT

            handle = await rt.ctx.get(AGENTS).resume(
                "s10", setup=lambda c: c.on(SESSION_EVENT, rec2)
            )
            assert handle.agent.turn == 1
            await _turn(rec2, handle, "what is my name?")
            assert rec2.of(ev.TURN_START)[0].data["turn"] == 2
            await handle.dispose()
        history = mock.requests[1].messages
        contents = [m.get("content") for m in history]
        assert "my name is Ada" in contents
        assert "remembered" in contents
        mock.assert_complete()

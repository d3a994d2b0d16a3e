"""The loop's controls: hooks, steering, concluding tools, bounds, setup rollback, approvals."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from loop_support import Recorder, create_agent, runtime_for
from pydantic import BaseModel

from starharness.mockllm import MockLlmServer, ScriptedCall, Stall, Success, ToolCalls
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import NamedToolChoice, UserMessage
from starharness.runtime.loop import (
    AGENTS,
    PRE_STEP,
    REQUEST,
    TURN_STOPPING,
    AgentOptions,
    OutgoingRequest,
    StepPlan,
    TurnStopping,
)
from starharness.runtime.session import event_types as ev
from starharness.runtime.telemetry import TELEMETRY
from starharness.runtime.tools import REQUIRES_APPROVAL, TOOLS, ToolRunContext, define_tool


class Say(BaseModel):
    line: str


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _speak_tool(ctx: Context, said: list[str]) -> None:
    async def speak(args: Say, run: ToolRunContext) -> str:
        said.append(args.line)
        run.conclude_turn()
        return "said"

    ctx.get(TOOLS).register(define_tool("speak", "Say a line.", Say, speak))


async def _run(handle: object, rec: Recorder, text: str) -> str:
    from starharness.runtime.loop import AgentHandle

    assert isinstance(handle, AgentHandle)
    handle.agent.followup(text)
    await handle.agent.when_idle()
    return str(rec.of(ev.TURN_END)[-1].data["reason"])


async def test_a_concluding_tool_ends_the_turn_after_one_request(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "c1",
            [ToolCalls(calls=[ScriptedCall(name="speak", arguments=json.dumps({"line": "hi"}))])],
        )
        said: list[str] = []
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "c1", lambda c: _speak_tool(c, said))
            assert await _run(handle, rec, "hello") == "completed"
            assert said == ["hi"]
            assert len(mock.requests) == 1
            await handle.dispose()
        mock.assert_complete()


async def test_pre_step_can_veto_and_request_hook_can_rewrite(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("c2", [Success(text="forced")])
        async with runtime_for(mock.base_url, home) as rt:
            vetoes: list[int] = []

            async def veto_first_turn(plan: StepPlan, next_: object) -> StepPlan | None:
                if plan.turn == 1:
                    vetoes.append(plan.step)
                    return None
                return await next_(plan)  # type: ignore[operator]

            async def force_tool(req: OutgoingRequest, next_: object) -> OutgoingRequest | None:
                req.request.tool_choice = NamedToolChoice("speak")
                req.request.max_tokens = 77
                return await next_(req)  # type: ignore[operator]

            def setup(c: Context) -> None:
                _speak_tool(c, [])
                c.on_waterfall(PRE_STEP, veto_first_turn)
                c.on_waterfall(REQUEST, force_tool)

            handle, rec = await create_agent(rt.ctx, "c2", setup)
            assert await _run(handle, rec, "one") == "aborted"
            vetoed = rec.of(ev.TURN_END)[-1].data
            # A vetoed turn says who ended it, as docs/runtime.md promises for every abort.
            assert vetoed["cause"] == "hook"
            assert vetoed["detail"] == "a listener of agent/pre-step vetoed the step"
            assert vetoes == [1]
            assert mock.requests == []
            assert await _run(handle, rec, "two") == "completed"
            body = mock.requests[0].body
            assert body["tool_choice"] == {"type": "function", "function": {"name": "speak"}}
            assert body.get("max_tokens", body.get("max_completion_tokens")) == 77
            await handle.dispose()


async def test_turn_stopping_can_keep_the_turn_going(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("c3", [Success(text="draft"), Success(text="final")])
        async with runtime_for(mock.base_url, home) as rt:
            asked: list[str] = []

            async def once_more(stop: TurnStopping) -> UserMessage | None:
                asked.append(stop.last_text)
                return UserMessage("be shorter", source="plugin") if len(asked) == 1 else None

            handle, rec = await create_agent(
                rt.ctx, "c3", lambda c: c.on_hook(TURN_STOPPING, once_more)
            )
            assert await _run(handle, rec, "write") == "completed"
            assert asked == ["draft", "final"]
            assert mock.requests[1].messages[-1]["content"] == "be shorter"
            await handle.dispose()


async def test_steer_enters_the_running_turn(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "c4",
            [
                Stall(phase="mid_stream", partial_text="thinking", duration_ms=150),
                Success(text="ok"),
            ],
        )
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "c4")
            agent = handle.agent
            agent.followup("start")
            await asyncio.wait_for(rec.streaming.wait(), 10)
            agent.steer("actually, stop")
            await agent.when_idle()
            # The stall ended in an error that was retried; the steer arrived in the same turn.
            assert len(rec.of(ev.TURN_START)) == 1
            users = [e.data["content"] for e in rec.of(ev.USER_MESSAGE)]
            assert users == ["start", "actually, stop"]
            await handle.dispose()


async def test_step_bound_ends_a_looping_turn(home: Path) -> None:
    loop_call = ToolCalls(
        calls=[ScriptedCall(name="noop", arguments=json.dumps({"line": "again"}))]
    )
    async with MockLlmServer(repeat_last=True) as mock:
        mock.script("c5", [loop_call])
        async with runtime_for(mock.base_url, home) as rt:

            def setup(c: Context) -> None:
                async def noop(args: Say, run: ToolRunContext) -> dict[str, object]:
                    return {"ok": False, "hint": "try again"}

                c.get(TOOLS).register(define_tool("noop", "Refuses.", Say, noop))

            recorder = Recorder()
            from starharness.runtime.loop import SESSION_EVENT

            def full_setup(c: Context) -> None:
                c.on(SESSION_EVENT, recorder)
                setup(c)

            handle = await rt.ctx.get(AGENTS).create(
                "c5", setup=full_setup, options=AgentOptions(max_steps=3)
            )
            assert await _run(handle, recorder, "go") == "error"
            end = recorder.of(ev.TURN_END)[-1]
            assert end.data["kind"] == "limit"
            assert "3 steps" in end.data["error"]
            assert len(mock.requests) == 3
            await handle.dispose()


async def test_a_failing_setup_rolls_back(home: Path) -> None:
    async with MockLlmServer() as mock, runtime_for(mock.base_url, home) as rt:

        def bad_setup(c: Context) -> None:
            _speak_tool(c, [])
            raise ValueError("setup broke")

        with pytest.raises(ValueError, match="setup broke"):
            await rt.ctx.get(AGENTS).create("c6", setup=bad_setup)
        assert rt.ctx.get(AGENTS).get("c6") is None
        assert "speak" not in rt.ctx.get(TOOLS).names()
        # The id is free again.
        handle = await rt.ctx.get(AGENTS).create("c6")
        await handle.dispose()


async def test_approval_refusal_is_logged_and_reaches_the_model(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "c7",
            [
                ToolCalls(
                    calls=[ScriptedCall(name="danger", arguments=json.dumps({"line": "rm"}))]
                ),
                Success(text="I was not allowed"),
            ],
        )
        async with runtime_for(mock.base_url, home) as rt:
            ran: list[str] = []

            def setup(c: Context) -> None:
                async def danger(args: Say, run: ToolRunContext) -> str:
                    ran.append(args.line)
                    return "done"

                c.get(TOOLS).register(
                    define_tool("danger", "Dangerous.", Say, danger, tags=[REQUIRES_APPROVAL])
                )

            handle, rec = await create_agent(rt.ctx, "c7", setup)
            assert await _run(handle, rec, "do it") == "completed"
            assert ran == []
            asked = rec.of(ev.APPROVAL_ASKED)
            decided = rec.of(ev.APPROVAL_DECIDED)
            assert [a.data["tool"] for a in asked] == ["danger"]
            assert decided[0].data["decision"] == "unavailable"
            result = rec.of(ev.TOOL_RESULT)[0]
            assert result.data["is_error"] is True
            assert "--allow danger" in result.data["content"]
            await handle.dispose()


async def test_each_agent_logs_only_the_approvals_it_asked_for(home: Path) -> None:
    # One listener pair serves every agent, routed by the request's session id.
    async with MockLlmServer() as mock:
        for sid, tool in (("c9", "launch"), ("c10", "dig")):
            call = ScriptedCall(name=tool, arguments=json.dumps({"line": sid}))
            mock.script(sid, [ToolCalls(calls=[call]), Success(text="refused")])
        async with runtime_for(mock.base_url, home) as rt:

            def setup_for(tool: str) -> Callable[[Context], None]:
                def setup(c: Context) -> None:
                    async def act(args: Say, run: ToolRunContext) -> str:
                        return "done"

                    c.get(TOOLS).register(
                        define_tool(tool, "Risky.", Say, act, tags=[REQUIRES_APPROVAL])
                    )

                return setup

            first, first_log = await create_agent(rt.ctx, "c9", setup_for("launch"))
            second, second_log = await create_agent(rt.ctx, "c10", setup_for("dig"))
            runs = (_run(first, first_log, "go"), _run(second, second_log, "go"))
            assert await asyncio.gather(*runs) == ["completed", "completed"]
            for log, tool in ((first_log, "launch"), (second_log, "dig")):
                assert [e.data["tool"] for e in log.of(ev.APPROVAL_ASKED)] == [tool]
                assert [e.data["tool"] for e in log.of(ev.APPROVAL_DECIDED)] == [tool]
            await first.dispose()
            # A disposed agent's approvals are no one's: the other agent's log stays its own.
            third, third_log = await create_agent(rt.ctx, "c9b", setup_for("launch"))
            mock.script(
                "c9b",
                [
                    ToolCalls(
                        calls=[ScriptedCall(name="launch", arguments=json.dumps({"line": "x"}))]
                    ),
                    Success(text="no"),
                ],
            )
            assert await _run(third, third_log, "go") == "completed"
            assert len(second_log.of(ev.APPROVAL_ASKED)) == 1
            assert len(third_log.of(ev.APPROVAL_ASKED)) == 1
            await second.dispose()
            await third.dispose()


async def test_telemetry_counts_requests_tokens_and_retries(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("c8", [Success(text="counted " * 20)])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(rt.ctx, "c8")
            await _run(handle, rec, "count")
            telemetry = rt.ctx.get(TELEMETRY)
            snap = telemetry.snapshot()
            flat = str(snap)
            assert "requests" in flat
            assert telemetry.value("requests", "openai-compatible", "mock-model") == 1
            assert telemetry.value("output_tokens", "openai-compatible", "mock-model") > 0
            await handle.dispose()

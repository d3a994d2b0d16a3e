"""A real agent over the mock LLM calls run_code; the program's two host calls are logged."""

from __future__ import annotations

import json
from typing import Any

from codemode_support import Market, PriceParams, SetPriceParams
from sandbox_support import Machine, needs_bwrap

from stack_support import start_test_runtime
from starharness.mockllm import MockLlmServer, ScriptedCall, Success, ToolCalls
from starharness.runtime.codemode import CODE_CALL, CODE_DONE, CODE_RESULT, CODE_RUN
from starharness.runtime.config import Patch
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AGENTS, SESSION_EVENT
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import REQUIRES_APPROVAL, TOOLS, define_tool
from starharness.runtime.tools.run import ToolRunContext

PROGRAM = """
ore = tools.get_price(item="ore")
tools.set_price(item="ore", price=ore["price"] + 5)
print("ore was", ore["price"])
"""


def _rows(base_url: str, machine: Machine) -> list[dict[str, Any]]:
    llm = {"provider": "openai-compatible", "model": "mock-model", "base_url": base_url}
    return [
        {"id": "llm", "config": llm},
        {"id": "sessions", "config": {"store": "memory"}},
        {
            "id": "sandbox",
            "plugin": "starharness.runtime.sandbox:SandboxPlugin",
            "config": {"providers": ["bubblewrap"], "root": str(machine.project)},
            "before": "agents",
        },
        {
            "id": "codemode",
            "plugin": "starharness.runtime.codemode:CodeModePlugin",
            "before": "agents",
        },
        {"id": "approvals", "merge": {"allow": ["set_price"]}},
    ]


def _host_tools(market: Market, events: list[SessionEvent]) -> Any:
    def get_price(args: PriceParams, run: ToolRunContext) -> dict[str, Any]:
        return {"item": args.item, "price": market.prices[args.item]}

    def set_price(args: SetPriceParams, run: ToolRunContext) -> str:
        market.prices[args.item] = args.price
        return "done"

    def setup(ctx: Context) -> None:
        ctx.on(SESSION_EVENT, lambda logged: events.append(logged.event))
        tools = ctx.get(TOOLS)
        tools.register(define_tool("get_price", "An item's price.", PriceParams, get_price))
        tools.register(
            define_tool(
                "set_price",
                "Set an item's price.",
                SetPriceParams,
                set_price,
                tags=(REQUIRES_APPROVAL,),
            )
        )

    return setup


@needs_bwrap
async def test_the_model_runs_a_program_and_the_session_shows_its_calls(machine: Machine) -> None:
    market = Market()
    events: list[SessionEvent] = []
    async with MockLlmServer() as mock:
        mock.script(
            "s1",
            [
                ToolCalls(
                    calls=[
                        ScriptedCall(name="run_code", arguments=json.dumps({"program": PROGRAM}))
                    ]
                ),
                Success(text="prices adjusted"),
            ],
        )
        patches = [Patch.of("mock and code mode", _rows(mock.base_url, machine))]
        async with await start_test_runtime(patches, home=machine.harness_home) as runtime:
            handle = await runtime.ctx.get(AGENTS).create("s1", setup=_host_tools(market, events))
            handle.agent.followup("adjust the ore price")
            await handle.agent.when_idle()
            await handle.dispose()
        requests = mock.requests_for("s1")
    assert market.prices["ore"] == 15
    assert len(requests) == 2  # the program's two calls cost no model request
    tool_message = requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    shown = json.loads(tool_message["content"])
    assert shown["output"] == "ore was 10\n"
    assert [(c["tool"], c["ok"]) for c in shown["calls"]] == [
        ("get_price", True),
        ("set_price", True),
    ]
    of = _by_type(events)
    [model_call] = of[ev.TOOL_CALL]
    assert model_call.data["name"] == "run_code"
    [run] = of[CODE_RUN]
    assert run.data["call_id"] == model_call.data["call_id"]
    assert run.data["provider"] == "bubblewrap"
    calls = of[CODE_CALL]
    assert [e.data["name"] for e in calls] == ["get_price", "set_price"]
    assert json.loads(calls[1].data["arguments"]) == {"item": "ore", "price": 15}
    assert [e.data["is_error"] for e in of[CODE_RESULT]] == [False, False]
    assert [e.data["tool"] for e in of[ev.APPROVAL_ASKED]] == ["set_price"]
    [done] = of[CODE_DONE]
    assert (done.data["status"], done.data["calls"]) == ("ok", 2)
    # Order in the log: the model's call, the program's calls and results, then its result.
    order = [e.type for e in events if e.type in (ev.TOOL_CALL, ev.TOOL_RESULT, CODE_CALL)]
    assert order == [ev.TOOL_CALL, CODE_CALL, CODE_CALL, ev.TOOL_RESULT]


def _by_type(events: list[SessionEvent]) -> dict[str, list[SessionEvent]]:
    found: dict[str, list[SessionEvent]] = {}
    for event in events:
        found.setdefault(event.type, []).append(event)
    return found

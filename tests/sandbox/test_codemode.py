"""run_code: a program's calls go through the same pipeline as the model's, and are logged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from codemode_support import code_rig, records, running, spawned
from sandbox_support import PROVIDERS, Machine, make_rig, needs_bwrap

from starharness.runtime.approvals import Decision
from starharness.runtime.codemode import (
    CODE_CALL,
    CODE_DONE,
    CODE_RESULT,
    CODE_RUN,
    NOT_ALLOWED,
    CodeModeConfig,
    CodeModePlugin,
    interpreter,
    run_code_tool,
)
from starharness.runtime.kernel import Next
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.sandbox import (
    SANDBOX_RECORD,
    SANDBOX_UNAVAILABLE,
    SandboxRecord,
    landlock_exec,
)
from starharness.runtime.tools import (
    TOOL_PRE_EXECUTE,
    TOOLS,
    CancelSignal,
    PreExecute,
    ToolOutcome,
)

TWO_CALLS = """
ore = tools.get_price(item="ore")
print("ore costs", ore["price"])
print(tools.set_price(item="ore", price=ore["price"] * 3))
"""


def _value(outcome: ToolOutcome) -> dict[str, Any]:
    text = outcome.content
    return json.loads(text[text.index("{") :])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_program_calls_host_tools_through_the_pipeline(
    machine: Machine, provider: str
) -> None:
    rig, market = await code_rig(machine.project, provider=provider)
    try:
        outcome = await rig.call("run_code", program=TWO_CALLS)
        assert not outcome.is_error, outcome.content
        value = _value(outcome)
        assert value["status"] == "ok"
        assert value["output"] == "ore costs 10\nore now 30\n"
        assert value["calls"] == [
            {"tool": "get_price", "args": {"item": "ore"}, "ok": True},
            {"tool": "set_price", "args": {"item": "ore", "price": 30}, "ok": True},
        ]
        assert market.prices["ore"] == 30
        # set_price is tagged requires-approval: the program's call was asked about like any.
        assert [request.tool for request in rig.asked] == ["set_price"]
        assert [request.call_id for request in rig.asked] == ["c1.2"]
        [run] = records(market, CODE_RUN)
        assert run["provider"] == provider and run["tools"] == ["get_price", "set_price"]
        assert [(r["id"], r["name"]) for r in records(market, CODE_CALL)] == [
            ("c1.1", "get_price"),
            ("c1.2", "set_price"),
        ]
        results = records(market, CODE_RESULT)
        assert [r["is_error"] for r in results] == [False, False]
        assert results[1]["content"] == "ore now 30"
        [done] = records(market, CODE_DONE)
        assert (done["status"], done["calls"], done["exit_code"]) == ("ok", 2, 0)
        assert running(rig) == 0
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_a_guard_denies_a_call_and_the_program_sees_a_tool_error(
    machine: Machine,
) -> None:
    rig, market = await code_rig(machine.project)

    async def cap(call: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        arguments = json.loads(call.call.arguments)
        if call.tool.name == "set_price" and arguments["price"] > 100:
            return call.deny("prices stay at or below 100")
        return await next_(call)

    rig.agent.on_waterfall(TOOL_PRE_EXECUTE, cap)
    program = """
try:
    tools.set_price(item="fuel", price=500)
except ToolError as error:
    print("refused:", error.code, error.message)
tools.set_price(item="fuel", price=50)
"""
    try:
        outcome = await rig.call("run_code", program=program)
        assert not outcome.is_error, outcome.content
        value = _value(outcome)
        assert (
            value["output"] == "refused: denied set_price was denied: prices stay at or below 100\n"
        )
        assert [call["ok"] for call in value["calls"]] == [False, True]
        assert value["calls"][0]["error"].startswith("denied: ")
        assert market.prices["fuel"] == 50
        errors = [r.get("error") for r in records(market, CODE_RESULT)]
        assert errors == [{"code": "denied"}, None]
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_a_rejected_approval_fails_that_call_only(machine: Machine) -> None:
    rig, market = await code_rig(machine.project, answers=[Decision.REJECTED])
    try:
        outcome = await rig.call("run_code", program=TWO_CALLS)
        assert outcome.is_error and outcome.error_code == "code_error"
        assert "ToolError: set_price failed (rejected)" in outcome.content
        assert market.prices["ore"] == 10
        assert [r["is_error"] for r in records(market, CODE_RESULT)] == [False, True]
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_shell_job_and_run_code_tools_cannot_be_called_from_a_program(
    machine: Machine,
) -> None:
    rig, _ = await code_rig(machine.project)
    program = """
print(sorted(tools.names))
for name in ("shell", "job_start", "job_read", "job_stop", "sandbox_escalate", "run_code"):
    try:
        tools.call(name, {"command": "touch made"})
    except ToolError as error:
        print(name, error.code)
"""
    try:
        outcome = await rig.call("run_code", program=program)
        assert not outcome.is_error, outcome.content
        lines = _value(outcome)["output"].splitlines()
        assert lines[0] == "['get_price', 'set_price']"
        assert lines[1:] == [
            f"{name} {NOT_ALLOWED}"
            for name in (
                "shell",
                "job_start",
                "job_read",
                "job_stop",
                "sandbox_escalate",
                "run_code",
            )
        ]
        assert not (machine.project / "made").exists()
        assert spawned(rig) == 1  # the program itself, nothing else
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_the_host_refuses_a_tool_outside_the_list_even_if_the_program_asks(
    machine: Machine,
) -> None:
    rig, market = await code_rig(machine.project, exclude=["set_price"])
    # Past the program-side check: the host's list is the one that counts.
    program = "tools.names = ('set_price',)\ntools.set_price(item='ore', price=1)"
    try:
        outcome = await rig.call("run_code", program=program)
        assert outcome.is_error
        assert f"set_price failed ({NOT_ALLOWED})" in outcome.content
        assert market.prices["ore"] == 10
        assert rig.asked == []
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_printed_lines_never_reach_the_protocol(machine: Machine) -> None:
    rig, market = await code_rig(machine.project)
    forged = json.dumps({"call": 1, "tool": "set_price", "args": {"item": "ore", "price": 1}})
    program = f"""
import os, sys
os.write(1, {forged!r}.encode() + b"\\n")
print({forged!r})
print("to stderr", file=sys.stderr)
"""
    try:
        outcome = await rig.call("run_code", program=program)
        assert not outcome.is_error, outcome.content
        value = _value(outcome)
        assert value["calls"] == []
        assert value["output"].count('"tool": "set_price"') == 2
        assert "to stderr" in value["output"]
        assert market.prices["ore"] == 10
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_garbage_on_the_protocol_ends_the_run(machine: Machine) -> None:
    rig, _ = await code_rig(machine.project)
    # Every pipe but the standard three: the runner's protocol descriptors are among them.
    program = """
import os, stat, time
for fd in range(3, 64):
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, b"not json\\n")
    except OSError:
        pass
time.sleep(30)
"""
    try:
        outcome = await rig.call("run_code", program=program)
        assert outcome.is_error and outcome.error_code == "code_protocol", outcome.content
        assert "sent a line that is not JSON" in outcome.content
        assert running(rig) == 0
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_a_program_over_its_call_limit_is_ended(machine: Machine) -> None:
    rig, _ = await code_rig(machine.project, max_calls=3)
    program = "for _ in range(10):\n    tools.get_price(item='ore')\nprint('never')"
    try:
        outcome = await rig.call("run_code", program=program)
        assert outcome.is_error and outcome.error_code == "code_calls", outcome.content
        assert "went over its limit of 3 tool calls" in outcome.content
        assert len(_value(outcome)["calls"]) == 3
        assert "never" not in outcome.content
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_host_calls_do_not_use_up_the_wall_time(machine: Machine) -> None:
    rig, _ = await code_rig(machine.project, wall_s=2)
    waited: list[float] = []

    async def slow(call: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        await asyncio.sleep(1.5)  # e.g. a person deciding an approval
        waited.append(1.5)
        return await next_(call)

    rig.agent.on_waterfall(TOOL_PRE_EXECUTE, slow)
    program = "for _ in range(2):\n    tools.get_price(item='ore')\nprint('done')"
    try:
        outcome = await rig.call("run_code", program=program)
        assert not outcome.is_error, outcome.content
        assert _value(outcome)["output"] == "done\n"
        assert len(waited) == 3  # run_code's own call, then the program's two
    finally:
        await rig.root.dispose()


async def test_without_a_working_provider_nothing_runs(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(landlock_exec, "abi_version", lambda: 0)
    rig = await make_rig(
        machine.project, providers=["bubblewrap", "landlock"], bwrap="/nonexistent/bwrap"
    )
    await CodeModePlugin().setup(rig.root.fork("codemode"), CodeModeConfig())
    try:
        outcome = await rig.call("run_code", program="print('hi')")
        assert outcome.is_error and outcome.error_code == SANDBOX_UNAVAILABLE
        assert "no sandbox provider works here" in outcome.content
        assert spawned(rig) == 0
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_the_standard_library_works_and_output_is_bounded(machine: Machine) -> None:
    rig, _ = await code_rig(machine.project, output_bytes=1000)
    program = """
import asyncio, json, math, subprocess, tempfile, os
with open(os.path.join(tempfile.gettempdir(), "scratch.txt"), "w") as f:
    f.write("the temp folder is writable")
print(json.dumps({"pi": round(math.pi, 2)}))
print("x" * 5000)
"""
    try:
        outcome = await rig.call("run_code", program=program)
        assert not outcome.is_error, outcome.content
        output = _value(outcome)["output"]
        assert output.startswith('{"pi": 3.14}\n')
        assert "output truncated" in output and len(output) < 1500
    finally:
        await rig.root.dispose()


@needs_bwrap
async def test_run_code_can_be_given_to_one_agent_only(machine: Machine) -> None:
    rig = await make_rig(machine.project)
    config = CodeModeConfig(every_agent=False, cpu_s=5)
    await CodeModePlugin().setup(rig.root.fork("codemode"), config)
    other = rig.root.child("other")
    try:
        assert "run_code" not in rig.agent.get(TOOLS).names()
        rig.agent.get(TOOLS).register(run_code_tool(config.settings(interpreter())))
        assert "run_code" in rig.agent.get(TOOLS).names()
        assert "run_code" not in other.get(TOOLS).names()
        outcome = await rig.call("run_code", program="print(sorted(tools.names))")
        assert not outcome.is_error, outcome.content
        assert _value(outcome)["output"] == "[]\n"  # the rig's agent has only sandbox tools
        [schema] = [s for s in rig.agent.get(TOOLS).schemas() if s.name == "run_code"]
        assert "at most 5s CPU" in schema.description
    finally:
        await other.dispose()
        await rig.root.dispose()


@needs_bwrap
async def test_cancelling_the_call_kills_the_program(machine: Machine) -> None:
    rig, _ = await code_rig(machine.project)
    cancel = CancelSignal()
    started = asyncio.Event()

    def first_result(record: SandboxRecord) -> None:
        if record.type == CODE_RESULT:
            started.set()

    rig.agent.on(SANDBOX_RECORD, first_result)
    program = "import time\ntools.get_price(item='ore')\ntime.sleep(60)"
    call = ToolCall("c1", "run_code", json.dumps({"program": program}))
    try:
        running_call = asyncio.ensure_future(
            rig.agent.get(TOOLS).execute_calls([call], session_id="s-1", cancel=cancel)
        )
        await started.wait()  # the program is running: it has made its first call
        assert running(rig) == 1
        cancel.set()
        [outcome] = await running_call
        assert outcome.is_error and outcome.error_code == "cancelled", outcome.content
        assert running(rig) == 0
    finally:
        await rig.root.dispose()

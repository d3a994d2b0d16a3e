"""Running calls: timeouts, the cancel signal, caller cancellation, parallel and serial batches."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    TOOLS,
    CancelSignal,
    FailureCode,
    ToolOutcome,
    ToolRunContext,
    ToolsConfig,
    ToolsPlugin,
    tool,
)


@tool
async def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()


async def _agent(**config: Any) -> Context:
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig(**config))
    root.get(TOOLS).register(shout)
    return root.child("agent")


async def _call(agent: Context, name: str, arguments: str, **kw: Any) -> ToolOutcome:
    [outcome] = await agent.get(TOOLS).execute_calls([ToolCall("c1", name, arguments)], **kw)
    return outcome


# -- timeout and cancellation ------------------------------------------------------------------


async def test_a_slow_tool_times_out() -> None:
    @tool(timeout_s=0.05)
    async def stuck() -> None:
        """Never finishes."""
        await asyncio.Event().wait()

    agent = await _agent()
    agent.get(TOOLS).register(stuck)
    outcome = await _call(agent, "stuck", "{}")
    assert outcome.content == "Error: stuck timed out after 0.05s"
    assert outcome.error_code == FailureCode.TIMEOUT


async def test_the_registry_default_timeout_applies_to_tools_without_one() -> None:
    @tool
    async def stuck() -> None:
        """Never finishes."""
        await asyncio.Event().wait()

    agent = await _agent(default_timeout_s=0.05)
    agent.get(TOOLS).register(stuck)
    assert (await _call(agent, "stuck", "{}")).error_code == FailureCode.TIMEOUT


async def test_a_timeout_error_raised_inside_a_tool_is_a_tool_error() -> None:
    @tool
    async def inner() -> None:
        """Its own wait times out."""
        await asyncio.wait_for(asyncio.Event().wait(), 0.01)

    agent = await _agent()
    agent.get(TOOLS).register(inner)
    assert (await _call(agent, "inner", "{}")).error_code == FailureCode.TOOL_ERROR


async def test_a_tool_that_swallows_its_timeout_leaves_no_cancel_behind() -> None:
    @tool(timeout_s=0.01)
    async def stubborn() -> str:
        """Ignores being cancelled once."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "kept going"
        return "never"

    agent = await _agent()
    agent.get(TOOLS).register(stubborn)
    outcome = await _call(agent, "stubborn", "{}")
    assert outcome.content == "kept going"
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0)  # a cancel left pending would be delivered here


async def test_a_tool_setting_its_own_signal_on_its_way_out_keeps_its_result() -> None:
    signal = CancelSignal()

    @tool
    async def quitter() -> str:
        """Sets the signal as it returns."""
        signal.set()
        return "done"

    agent = await _agent()
    agent.get(TOOLS).register(quitter)
    outcome = await _call(agent, "quitter", "{}", cancel=signal)
    assert outcome.content == "done"
    await asyncio.sleep(0.01)  # a cancel aimed at the finished call would land here


async def test_the_cancel_signal_stops_a_running_call_and_fails_the_rest() -> None:
    started = asyncio.Event()
    cleaned: list[str] = []

    @tool
    async def long(run: ToolRunContext) -> None:
        """Runs until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append(run.call_id)

    agent = await _agent()
    agent.get(TOOLS).register(long)
    signal = CancelSignal()
    batch = asyncio.create_task(
        agent.get(TOOLS).execute_calls(
            [ToolCall("a", "long", "{}"), ToolCall("b", "long", "{}")], cancel=signal
        )
    )
    await started.wait()
    signal.set()
    first, second = await batch
    assert first.content == "Error: long was cancelled"
    assert first.error_code == FailureCode.CANCELLED
    assert second.content == "Error: long was cancelled before it started"
    assert cleaned == ["a"]


async def test_cancelling_the_caller_cancels_running_tools_and_propagates() -> None:
    started = asyncio.Event()
    cleaned: list[str] = []

    @tool(concurrency_safe=True)
    async def long(run: ToolRunContext) -> None:
        """Runs until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append(run.call_id)

    agent = await _agent()
    agent.get(TOOLS).register(long)
    batch = asyncio.create_task(
        agent.get(TOOLS).execute_calls([ToolCall("a", "long", "{}"), ToolCall("b", "long", "{}")])
    )
    await started.wait()
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert sorted(cleaned) == ["a", "b"]


async def test_a_signal_set_after_a_call_finished_does_not_touch_its_result() -> None:
    agent = await _agent()
    signal = CancelSignal()
    outcome = await _call(agent, "shout", '{"text": "a"}', cancel=signal)
    signal.set()
    await asyncio.sleep(0)
    assert outcome.content == "A"


# -- parallel and sequential batches -----------------------------------------------------------


async def test_safe_calls_run_in_parallel_and_results_keep_call_order() -> None:
    gate = asyncio.Event()

    @tool(concurrency_safe=True, timeout_s=5)
    async def waiter() -> str:
        """Waits for the opener."""
        await gate.wait()
        return "waited"

    @tool(concurrency_safe=True)
    async def opener() -> str:
        """Opens the gate."""
        gate.set()
        return "opened"

    agent = await _agent()
    agent.get(TOOLS).register(waiter)
    agent.get(TOOLS).register(opener)
    # The waiter can only finish if the opener runs while it waits.
    outcomes = await agent.get(TOOLS).execute_calls(
        [ToolCall("1", "waiter", "{}"), ToolCall("2", "opener", "{}")]
    )
    assert [o.call.id for o in outcomes] == ["1", "2"]
    assert [o.content for o in outcomes] == ["waited", "opened"]


async def test_unsafe_calls_run_one_at_a_time_in_call_order() -> None:
    log: list[str] = []

    @tool
    async def step(label: str) -> str:
        """Logs its start and end."""
        log.append(f"start {label}")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        log.append(f"end {label}")
        return label

    agent = await _agent()
    agent.get(TOOLS).register(step)
    calls = [ToolCall(str(i), "step", f'{{"label": "{i}"}}') for i in range(3)]
    outcomes = await agent.get(TOOLS).execute_calls(calls)
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert [o.content for o in outcomes] == ["0", "1", "2"]


async def test_an_unsafe_call_waiting_on_a_later_one_shows_they_do_not_overlap() -> None:
    gate = asyncio.Event()

    @tool(timeout_s=0.05)
    async def waiter() -> str:
        """Waits for the opener."""
        await gate.wait()
        return "waited"

    @tool
    async def opener() -> str:
        """Opens the gate."""
        gate.set()
        return "opened"

    agent = await _agent()
    agent.get(TOOLS).register(waiter)
    agent.get(TOOLS).register(opener)
    first, second = await agent.get(TOOLS).execute_calls(
        [ToolCall("1", "waiter", "{}"), ToolCall("2", "opener", "{}")]
    )
    assert first.error_code == FailureCode.TIMEOUT
    assert second.content == "opened"


async def test_an_unsafe_call_splits_safe_groups() -> None:
    log: list[str] = []

    def make(name: str, safe: bool) -> None:
        @tool(name=name, description=name, concurrency_safe=safe)
        async def run() -> str:
            log.append(f"start {name}")
            await asyncio.sleep(0)
            log.append(f"end {name}")
            return name

        agent.get(TOOLS).register(run)

    agent = await _agent()
    make("r1", True)
    make("r2", True)
    make("w", False)
    make("r3", True)
    names = ["r1", "r2", "w", "r3"]
    outcomes = await agent.get(TOOLS).execute_calls([ToolCall(n, n, "{}") for n in names])
    assert [o.content for o in outcomes] == names
    assert log[:2] == ["start r1", "start r2"]
    assert log[4:] == ["start w", "end w", "start r3", "end r3"]


async def test_max_parallel_limits_how_many_safe_calls_overlap() -> None:
    running = 0
    peak = 0

    @tool(concurrency_safe=True)
    async def work() -> int:
        """Counts overlap."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(3):
            await asyncio.sleep(0)
        running -= 1
        return peak

    agent = await _agent(max_parallel=2)
    agent.get(TOOLS).register(work)
    outcomes = await agent.get(TOOLS).execute_calls(
        [ToolCall(str(i), "work", "{}") for i in range(6)]
    )
    assert len(outcomes) == 6
    assert peak == 2


# -- the cancel signal itself ------------------------------------------------------------------


def test_cancel_signal_runs_callbacks_once_and_late_callbacks_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = CancelSignal()
    seen: list[str] = []
    remove = signal.add_callback(lambda: seen.append("removed"))
    signal.add_callback(lambda: seen.append("kept"))

    def broken() -> None:
        raise RuntimeError("callback bug")

    signal.add_callback(broken)
    remove()
    remove()
    signal.set()
    signal.set()
    signal.add_callback(lambda: seen.append("late"))
    assert seen == ["kept", "late"]
    assert signal.is_set()
    assert "cancel callback failed" in caplog.text


async def test_a_signal_set_after_a_timeout_fired_is_harmless(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = CancelSignal()

    @tool(timeout_s=0.01)
    async def stubborn() -> None:
        """Sets the signal while being timed out."""
        try:
            await asyncio.Event().wait()
        finally:
            signal.set()

    agent = await _agent()
    agent.get(TOOLS).register(stubborn)
    outcome = await _call(agent, "stubborn", "{}", cancel=signal)
    assert outcome.error_code in (FailureCode.TIMEOUT, FailureCode.CANCELLED)
    assert "cancel callback failed" not in caplog.text

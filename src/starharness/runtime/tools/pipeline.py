"""One call through the pipeline: validate, pre-execute, approval, execute, post-execute."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..approvals import ApprovalRequest, Decision, request_approval
from ..llm.types import ToolCall
from .arguments import ToolArgsError, describe_invalid
from .call_guard import CallGuard
from .definition import ToolDefinition
from .hooks import (
    TOOL_POST_EXECUTE,
    TOOL_PRE_EXECUTE,
    TOOL_RESULT,
    PostExecute,
    PreExecute,
    Verdict,
)
from .results import FailureCode, ToolFailure, ToolOutcome, ToolResult, ToolSuccess, render_content
from .run import ToolRunContext

RunFactory = Callable[[ToolCall], ToolRunContext]


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    default_timeout_s: float | None = 120.0
    ask_names: frozenset[str] = frozenset()
    ask_tags: frozenset[str] = frozenset()
    max_parallel: int = 16

    def asks(self, tool: ToolDefinition[Any]) -> bool:
        return tool.name in self.ask_names or not self.ask_tags.isdisjoint(tool.tags)


async def run_batch(
    calls: Sequence[ToolCall],
    tools: Sequence[ToolDefinition[Any] | None],
    make_run: RunFactory,
    settings: PipelineSettings,
) -> list[ToolOutcome]:
    """Run one step's calls: adjacent concurrency-safe calls together, the rest one by one.

    Results come back in call order whatever order they finish in.
    """
    outcomes: list[ToolOutcome] = []
    count = len(calls)
    start = 0
    while start < count:
        end = start + 1
        if _parallel_ok(tools[start]):
            while end < count and _parallel_ok(tools[end]):
                end += 1
        if end - start == 1:
            call = calls[start]
            outcomes.append(await run_call(call, tools[start], make_run(call), settings))
        else:
            outcomes.extend(await _run_group(calls, tools, start, end, make_run, settings))
        start = end
    return outcomes


def _parallel_ok(tool: ToolDefinition[Any] | None) -> bool:
    # An unknown tool fails at once without side effects, so it need not split a group.
    return tool is None or tool.concurrency_safe


async def _run_group(
    calls: Sequence[ToolCall],
    tools: Sequence[ToolDefinition[Any] | None],
    start: int,
    end: int,
    make_run: RunFactory,
    settings: PipelineSettings,
) -> list[ToolOutcome]:
    limit = (
        asyncio.Semaphore(settings.max_parallel) if end - start > settings.max_parallel else None
    )

    async def one(index: int) -> ToolOutcome:
        call = calls[index]
        if limit is None:
            return await run_call(call, tools[index], make_run(call), settings)
        async with limit:
            return await run_call(call, tools[index], make_run(call), settings)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(index)) for index in range(start, end)]
    return [task.result() for task in tasks]


async def run_call(
    call: ToolCall,
    tool: ToolDefinition[Any] | None,
    run: ToolRunContext,
    settings: PipelineSettings,
) -> ToolOutcome:
    """The whole pipeline for one call; never raises except when the caller is cancelled."""
    if tool is None:
        result: ToolResult = ToolFailure(f"unknown tool {call.name!r}", FailureCode.UNKNOWN_TOOL)
    else:
        try:
            args = tool.parse(call.arguments)
        except ValueError as error:
            result = ToolFailure(
                f"invalid arguments for {tool.name}: {_invalid(error)}", FailureCode.INVALID_ARGS
            )
        except Exception as error:
            result = _fault(f"cannot read the arguments for {tool.name}", error)
        else:
            result = await _guarded(call, tool, args, run, settings)
    outcome = ToolOutcome(
        call,
        result,
        concludes_turn=run.concludes_turn and isinstance(result, ToolSuccess),
        deferred=run.deferred,
    )
    run.ctx.emit(TOOL_RESULT, outcome)
    return outcome


async def _guarded(
    call: ToolCall,
    tool: ToolDefinition[Any],
    args: Any,
    run: ToolRunContext,
    settings: PipelineSettings,
) -> ToolResult:
    """Runs the rest of the pipeline so that the cancel signal and the timeout can stop it."""
    signal = run.cancel
    if signal.is_set():
        return ToolFailure(f"{tool.name} was cancelled before it started", FailureCode.CANCELLED)
    timeout = tool.timeout_s if tool.timeout_s is not None else settings.default_timeout_s
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("tool calls must run inside an asyncio task")
    guard = CallGuard(asyncio.get_running_loop(), task)
    stop_listening = signal.add_callback(guard.cancel)
    try:
        return await _checked_run(call, tool, args, run, settings, guard, timeout)
    except asyncio.CancelledError:
        if not guard.caused():
            raise
        if signal.is_set():
            return ToolFailure(f"{tool.name} was cancelled", FailureCode.CANCELLED)
        return ToolFailure(f"{tool.name} timed out after {timeout:g}s", FailureCode.TIMEOUT)
    except TimeoutError as error:
        # Not ours (ours arrives as a cancellation): something in the pipeline timed out.
        return _fault(f"{tool.name} failed", error)
    finally:
        guard.close()
        stop_listening()


async def _checked_run(
    call: ToolCall,
    tool: ToolDefinition[Any],
    args: Any,
    run: ToolRunContext,
    settings: PipelineSettings,
    guard: CallGuard,
    limit_s: float | None,
) -> ToolResult:
    events = run.ctx.events
    verdict: Verdict = "ask" if settings.asks(tool) else "allow"
    reason = ""
    # Without listeners the chains would hand the values straight back, so skip building them.
    if events.has_listeners(TOOL_PRE_EXECUTE):
        try:
            checked = await events.waterfall(
                TOOL_PRE_EXECUTE, PreExecute(call, tool, args, run, verdict)
            )
        except Exception as error:
            return _fault(
                f"a pre-execute check of {tool.name} failed", error, FailureCode.HOOK_ERROR
            )
        if checked is None:
            return ToolFailure(f"{tool.name} was blocked before it ran", FailureCode.DENIED)
        args, verdict, reason = checked.args, checked.verdict, checked.reason
    if verdict == "deny":
        return ToolFailure(
            f"{tool.name} was denied: {reason or 'no reason given'}", FailureCode.DENIED
        )
    if verdict == "ask":
        refusal = await _approve(call, tool, run, reason)
        if refusal is not None:
            return refusal
    result = await _execute(tool, args, run, guard, limit_s)
    if not events.has_listeners(TOOL_POST_EXECUTE):
        return result
    try:
        after = await events.waterfall(
            TOOL_POST_EXECUTE, PostExecute(call, tool, args, run, result)
        )
    except Exception as error:
        return _fault(f"a post-execute step of {tool.name} failed", error, FailureCode.HOOK_ERROR)
    if after is None:
        return ToolFailure(f"the result of {tool.name} was withheld", FailureCode.WITHHELD)
    return after.result


async def _approve(
    call: ToolCall, tool: ToolDefinition[Any], run: ToolRunContext, reason: str
) -> ToolFailure | None:
    request = ApprovalRequest(
        tool=tool.name,
        call_id=call.id,
        arguments=call.arguments,
        session_id=run.session_id,
        reason=reason,
        tags=tool.tags,
    )
    decided = await request_approval(run.ctx, request)
    if decided.decision.allowed:
        return None
    return ToolFailure(decided.message, _REFUSAL_CODES[decided.decision])


_REFUSAL_CODES = {
    Decision.REJECTED: FailureCode.REJECTED,
    Decision.CANCELLED: FailureCode.CANCELLED,
    Decision.UNAVAILABLE: FailureCode.APPROVAL_UNAVAILABLE,
}


async def _execute(
    tool: ToolDefinition[Any],
    args: Any,
    run: ToolRunContext,
    guard: CallGuard,
    limit_s: float | None,
) -> ToolResult:
    # Only the tool itself runs under its timeout; the hooks around it stop on the signal alone.
    if limit_s is not None:
        guard.arm(limit_s)
    try:
        value = await tool.execute(args, run)
    except Exception as error:
        result: ToolResult = _fault(_message(error), error)
    else:
        result = _as_result(tool, value)
    finally:
        guard.disarm()
    return result


def _as_result(tool: ToolDefinition[Any], value: Any) -> ToolResult:
    if isinstance(value, ToolSuccess | ToolFailure):
        return value
    try:
        return ToolSuccess(value, render_content(value))
    except Exception as error:
        return _fault(
            f"{tool.name} returned a value that cannot be shown to the model: {_message(error)}",
            error,
            FailureCode.INVALID_OUTPUT,
        )


def _invalid(error: ValueError) -> str:
    if isinstance(error, ValidationError | ToolArgsError):
        return describe_invalid(error)
    return _message(error)


def _message(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _fault(message: str, error: BaseException, code: str = FailureCode.TOOL_ERROR) -> ToolFailure:
    trace = "".join(traceback.format_exception(error))
    return ToolFailure(message, code, trace)

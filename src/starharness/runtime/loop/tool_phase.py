"""The tool phase of a step: log the calls, run them through the registry, log the results."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..llm.types import ToolCall
from ..session import event_types as ev
from ..tools import TOOLS

if TYPE_CHECKING:
    from .agent import Agent


async def run_tool_calls(agent: Agent, turn: int, step: int, calls: Sequence[ToolCall]) -> bool:
    """Run `calls`; returns True when a tool concluded the turn."""
    for call in calls:
        agent.log(
            ev.TOOL_CALL,
            ev.ToolCallEventData(
                turn=turn, step=step, call_id=call.id, name=call.name, arguments=call.arguments
            ),
        )
    registry = agent.ctx.maybe(TOOLS)
    if registry is None:
        for call in calls:
            _log_result(
                agent, turn, step, call, f"Error: unknown tool {call.name!r}", True, "UNKNOWN_TOOL"
            )
        return False
    done: set[str] = set()
    try:
        outcomes = await registry.execute_calls(calls, agent.ctx, session_id=agent.session.id)
    except asyncio.CancelledError:
        # Every call needs a result, or the next request would be malformed.
        for call in calls:
            if call.id not in done:
                _log_result(agent, turn, step, call, "Error: aborted", True, "ABORTED")
        raise
    concluded = False
    for call, outcome in zip(calls, outcomes, strict=True):
        done.add(call.id)
        error = outcome.error_code if outcome.is_error else None
        data = _result_data(turn, step, call, outcome.content, outcome.is_error, error)
        if outcome.is_error and outcome.traceback:
            data["traceback"] = outcome.traceback
        agent.log(ev.TOOL_RESULT, data)
        concluded = concluded or outcome.concludes_turn
    for outcome in outcomes:
        for text in outcome.deferred:
            agent.log(ev.USER_MESSAGE, ev.UserMessageData(content=text, source="tool"))
    return concluded


def _result_data(
    turn: int, step: int, call: ToolCall, content: str, is_error: bool, code: str | None
) -> ev.ToolResultData:
    data = ev.ToolResultData(
        turn=turn, step=step, call_id=call.id, name=call.name, content=content, is_error=is_error
    )
    if code is not None:
        data["error"] = ev.ToolErrorData(code=code)
    return data


def _log_result(
    agent: Agent, turn: int, step: int, call: ToolCall, content: str, is_error: bool, code: str
) -> None:
    agent.log(ev.TOOL_RESULT, _result_data(turn, step, call, content, is_error, code))

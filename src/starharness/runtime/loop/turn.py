"""A turn: steps until no tool result is owed and no input is queued, then `turn/end`."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ..errors import StarHarnessError
from ..llm.errors import ContextOverflowError, LlmError
from ..llm.types import UserMessage
from ..session import event_types as ev
from ..telemetry import turn_span
from .hooks import (
    COMPACT,
    PRE_STEP,
    REQUEST,
    TURN_STOPPING,
    CompactRequest,
    StepPlan,
    TurnStopping,
)
from .step_runner import run_step
from .tool_phase import run_tool_calls
from .view_log import log_view_change

if TYPE_CHECKING:
    from .agent import Agent

_log = logging.getLogger("starharness.runtime.loop")


class TurnLimitError(StarHarnessError):
    """A turn hit its step or time bound."""


class _Vetoed(Exception):
    """A waterfall listener vetoed the step: the turn ends `aborted` with cause `hook`."""

    def __init__(self, hook: str) -> None:
        super().__init__(hook)
        self.hook = hook


def log_user(agent: Agent, message: UserMessage) -> None:
    agent.log(ev.USER_MESSAGE, ev.UserMessageData(content=message.content, source=message.source))


async def run_turn(agent: Agent, first: UserMessage) -> None:
    """Run one turn for `first` and log exactly one `turn/start` and one `turn/end`."""
    agent.turn += 1
    turn = agent.turn
    agent.log(ev.TURN_START, ev.TurnStartData(turn=turn))
    # The context before the turn's words: a small model answers what it read last, and a
    # state block logged after a request to buy something turned the request into a sale.
    # The words are logged even when a context cannot be rendered; the turn then ends with
    # that error.
    unrendered: Exception | None = None
    try:
        _snapshot_context(agent)
    except Exception as exc:
        unrendered = exc
    log_user(agent, first)
    end = ev.TurnEndData(turn=turn, reason="completed")
    with turn_span(agent.id, turn):
        try:
            if unrendered is not None:
                raise unrendered
            timeout = agent.options.turn_timeout_s
            if timeout is None:
                end["reason"] = await _steps(agent, turn)
            else:
                try:
                    end["reason"] = await asyncio.wait_for(_steps(agent, turn), timeout)
                except TimeoutError:
                    raise TurnLimitError(f"turn exceeded its time limit of {timeout:g} s") from None
        except asyncio.CancelledError:
            cause = agent.take_cancel_cause()
            end = ev.TurnEndData(turn=turn, reason="aborted", cause=cause.kind, detail=cause.reason)
        except _Vetoed as vetoed:
            detail = f"a listener of {vetoed.hook} vetoed the step"
            end = ev.TurnEndData(turn=turn, reason="aborted", cause="hook", detail=detail)
        except TurnLimitError as exc:
            end = ev.TurnEndData(turn=turn, reason="error", error=str(exc), kind="limit")
        except LlmError as exc:
            end = ev.TurnEndData(turn=turn, reason="error", error=str(exc), kind=type(exc).__name__)
        except Exception as exc:
            _log.exception("agent %s: turn %d failed", agent.id, turn)
            error = f"{type(exc).__name__}: {exc}"
            end = ev.TurnEndData(turn=turn, reason="error", error=error, kind="internal")
        finally:
            agent.log(ev.TURN_END, end)


async def _steps(agent: Agent, turn: int) -> ev.TurnEndReason:
    step = 0
    overflowed = False
    while True:
        step += 1
        if step > agent.options.max_steps:
            raise TurnLimitError(f"turn exceeded its limit of {agent.options.max_steps} steps")
        while agent.steering:
            log_user(agent, agent.steering.pop(0))
        if agent.ctx.events.has_listeners(COMPACT):
            await agent.ctx.events.bail(COMPACT, CompactRequest(agent, turn, step, "pressure"))
        messages = agent.session.messages()
        if agent.ctx.events.has_listeners(PRE_STEP):
            plan = await agent.ctx.events.waterfall(
                PRE_STEP, StepPlan(agent, turn, step, list(messages))
            )
            if plan is None:
                raise _Vetoed(PRE_STEP.name)
            # What a listener changed goes into the log before it can reach the model.
            log_view_change(agent, turn, step, plan.messages, PRE_STEP.name)
            messages = agent.session.messages()
        try:
            result = await run_step(agent, turn, step, messages)
        except ContextOverflowError:
            agent.log(ev.STEP_END, ev.StepEndData(turn=turn, step=step, error="context-overflow"))
            if overflowed or not agent.ctx.events.has_listeners(COMPACT):
                raise
            overflowed = True
            compacted = await agent.ctx.events.bail(
                COMPACT, CompactRequest(agent, turn, step, "overflow")
            )
            if not compacted:
                raise
            continue
        overflowed = False
        if result is None:
            raise _Vetoed(REQUEST.name)
        concluded = False
        if result.message.tool_calls:
            concluded = await run_tool_calls(agent, turn, step, result.message.tool_calls)
        agent.log(ev.STEP_END, ev.StepEndData(turn=turn, step=step))
        if agent.steering:
            continue
        if result.message.tool_calls and not concluded:
            continue
        if result.finish == "max-tokens" and not result.message.tool_calls:
            return "max-tokens"
        if agent.ctx.events.has_listeners(TURN_STOPPING):
            more = await agent.ctx.events.bail(
                TURN_STOPPING, TurnStopping(agent, turn, step, result.message.text)
            )
            if isinstance(more, UserMessage):
                log_user(agent, more)
                continue
        return "completed"


def _snapshot_context(agent: Agent) -> None:
    """Log the dynamic context once per turn, before the turn's first message: each entry
    whose text changed since it was last logged, as its own message. An entry that changes
    every turn (what the player's words retrieved) then costs a model server that reuses the
    prompt it already evaluated only its own tokens, not the whole scene again."""
    from ..prompt import PROMPT

    prompt = agent.ctx.maybe(PROMPT)
    if prompt is None:
        return
    logged = agent.last_context
    for name, text in prompt.render_context_parts(agent.ctx):
        if logged.get(name) != text:
            logged[name] = text
            agent.log(
                ev.USER_MESSAGE, ev.UserMessageData(content=text, source="context", entry=name)
            )

"""Pipeline hooks: guards and approval policies before, rewrites after, observers at the end."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ..kernel import Event, Waterfall
from ..llm.types import ToolCall
from .definition import ToolDefinition
from .results import ToolOutcome, ToolResult
from .run import ToolRunContext

Verdict = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class PreExecute:
    """A validated call about to run. Listeners answer with `allow()`, `deny(reason)` or `ask()`.

    Returning a copy without calling `next` ends the chain with that verdict; not returning
    anything (None) blocks the call. `with_args` rewrites the arguments.
    """

    call: ToolCall
    tool: ToolDefinition[Any]
    args: Any
    run: ToolRunContext
    verdict: Verdict = "allow"
    reason: str = ""

    def allow(self) -> PreExecute:
        return replace(self, verdict="allow", reason="")

    def deny(self, reason: str) -> PreExecute:
        return replace(self, verdict="deny", reason=reason)

    def ask(self, reason: str = "") -> PreExecute:
        return replace(self, verdict="ask", reason=reason)

    def with_args(self, args: Any) -> PreExecute:
        return replace(self, args=args)


@dataclass(frozen=True, slots=True)
class PostExecute:
    """A call that ran. Listeners may replace `result` (`with_result`); None withholds it."""

    call: ToolCall
    tool: ToolDefinition[Any]
    args: Any
    run: ToolRunContext
    result: ToolResult

    def with_result(self, result: ToolResult) -> PostExecute:
        return replace(self, result=result)


TOOL_PRE_EXECUTE: Waterfall[PreExecute] = Waterfall("tools/pre-execute")
"""Guards and approval policies: allow, deny with a reason, or ask the approval service."""
TOOL_POST_EXECUTE: Waterfall[PostExecute] = Waterfall("tools/post-execute")
"""Rewrite or replace what a tool returned (it also sees tools that raised or timed out)."""
TOOL_RESULT: Event[ToolOutcome] = Event("tool/result")
"""Every call's final outcome, in completion order, for observers (the loop logs each one as
the session event of the same name)."""

"""One call from a program to a host tool: logged, then run through the registry's pipeline."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from ..llm.types import ToolCall
from ..sandbox import AgentSandbox
from ..tools import TOOLS, ToolFailure, ToolOutcome, ToolSuccess
from ..tools.run import ToolRunContext
from .keys import CODE_CALL, CODE_RESULT, CodeCallData, CodeErrorData, CodeResultData

NOT_ALLOWED = "not_allowed"
"""Failure code of a call to a tool the program may not call (it never reaches the pipeline)."""


@dataclass(frozen=True, slots=True)
class CodeCall:
    """What the program called and how it went, as the run_code result lists it."""

    tool: str
    args: dict[str, Any]
    ok: bool
    error: str | None = None
    """`<code>: <message>` of a failed call."""

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"tool": self.tool, "args": self.args, "ok": self.ok}
        if self.error is not None:
            shown["error"] = self.error
        return shown


class HostCalls:
    """Runs a program's calls as the calling agent: same registry view, context and cancel."""

    def __init__(self, run: ToolRunContext, sandbox: AgentSandbox, allowed: list[str]) -> None:
        self._run = run
        self._sandbox = sandbox
        self.allowed = frozenset(allowed)
        self.made: list[CodeCall] = []

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one call; the answer line for the program ({ok, value} or {ok, code, message})."""
        run = self._run
        call = ToolCall(f"{run.call_id}.{len(self.made) + 1}", name, json.dumps(args))
        run_id = run.call_id
        self._sandbox.record(
            run.ctx,
            CODE_CALL,
            CodeCallData(call_id=run_id, id=call.id, name=call.name, arguments=call.arguments),
        )
        if name in self.allowed:
            registry = run.ctx.get(TOOLS)
            outcome = await registry.execute(
                call, run.ctx, session_id=run.session_id, cancel=run.cancel
            )
        else:
            failure = ToolFailure(
                f"{name!r} cannot be called from a program; callable: {sorted(self.allowed)}",
                NOT_ALLOWED,
            )
            outcome = ToolOutcome(call, failure)
        data = CodeResultData(
            call_id=run_id,
            id=call.id,
            name=call.name,
            content=outcome.content,
            is_error=outcome.is_error,
        )
        if outcome.error_code is not None:
            data["error"] = CodeErrorData(code=outcome.error_code)
        self._sandbox.record(run.ctx, CODE_RESULT, data)
        result = outcome.result
        if isinstance(result, ToolSuccess):
            self.made.append(CodeCall(name, args, True))
            return {"ok": True, "value": _value(result)}
        self.made.append(CodeCall(name, args, False, f"{result.code}: {result.message}"))
        return {"ok": False, "code": result.code, "message": result.message}


def _value(result: ToolSuccess) -> Any:
    """The tool's value as JSON values (what the program gets back), else the text it showed."""
    if isinstance(result.value, str):
        return result.value
    try:
        return to_jsonable_python(result.value)
    except Exception:
        return result.content

"""The run_code tool: the model's program runs confined and calls host tools through a pipe."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..sandbox import SANDBOX, SANDBOX_UNAVAILABLE, SandboxUnavailableError
from ..sandbox.keys import SANDBOX_REFUSED, SandboxRefusedData
from ..tools import MUTATING, TOOLS, ToolDefinition, ToolFailure, ToolSuccess, define_tool
from ..tools.run import ToolRunContext
from .calls import HostCalls
from .keys import CODE_DONE, CODE_RUN, CodeDoneData, CodeRunData
from .program import CodeRun, confine, run_program
from .settings import RUN_CODE, CodeModeSettings


def _description(settings: CodeModeSettings) -> str:
    return (
        "Run a short Python 3 program (standard library only) in a sandbox: read-only files, "
        f"no network, no processes, at most {settings.cpu_s}s CPU, {settings.wall_s:g}s wall "
        f"time, {settings.memory_mb} MB memory and {settings.max_calls} tool calls. In it, "
        "`tools.NAME(arg=value, ...)` calls your tool NAME and returns its result (text, or "
        "JSON as Python values); a failed call raises ToolError (.code, .message), which the "
        "program may catch. `tools.names` lists the tools it may call (yours, except run_code "
        "and the shell and job tools). Use it to make many tool calls in one step. Returns "
        "what the program printed and every call it made."
    )


def run_code_tool(settings: CodeModeSettings) -> ToolDefinition[Any]:
    """The run_code tool; register it globally (the plugin does) or on one agent's layer."""

    class RunCodeParams(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        program: str = Field(
            min_length=1,
            max_length=settings.max_program_chars,
            description="The Python program; print what you want to see.",
        )

    async def run_code(args: RunCodeParams, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        sandbox = run.ctx.get(SANDBOX).for_context(run.ctx)
        try:
            confined, policy = await confine(sandbox, settings)
        except SandboxUnavailableError as error:
            sandbox.record(
                run.ctx,
                SANDBOX_REFUSED,
                SandboxRefusedData(call_id=run.call_id, code=error.code, message=str(error)),
            )
            return ToolFailure(str(error), SANDBOX_UNAVAILABLE)
        allowed = settings.callable_tools(run.ctx.get(TOOLS).names())
        calls = HostCalls(run, sandbox, allowed)
        sandbox.record(
            run.ctx,
            CODE_RUN,
            CodeRunData(
                call_id=run.call_id,
                provider=confined.provider,
                tools=allowed,
                limits={**settings.guest_limits(), "wall_s": settings.wall_s},
            ),
        )
        found = await run_program(sandbox, confined, policy, args.program, calls, settings)
        sandbox.record(
            run.ctx,
            CODE_DONE,
            CodeDoneData(
                call_id=run.call_id,
                status=found.status,
                exit_code=found.exit_code,
                calls=len(found.calls),
                output_bytes=found.output_bytes,
                message=found.message,
                cpu_ms=None if found.cpu_s is None else round(found.cpu_s * 1000, 3),
            ),
        )
        return _result(found, settings)

    return define_tool(
        RUN_CODE,
        _description(settings),
        RunCodeParams,
        run_code,
        timeout_s=settings.tool_timeout_s,
        tags=(MUTATING,),
    )


def _result(found: CodeRun, settings: CodeModeSettings) -> ToolSuccess | ToolFailure:
    listed = found.calls[: settings.listed_calls]
    value: dict[str, Any] = {
        "status": found.status,
        "output": found.output,
        "calls": [call.as_json() for call in listed],
    }
    if len(found.calls) > len(listed):
        value["calls_not_listed"] = len(found.calls) - len(listed)
    shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if found.ok:
        return ToolSuccess(value, shown)
    detail = f"\n{found.traceback.rstrip()}" if found.traceback and found.status == "error" else ""
    return ToolFailure(f"{found.message} [{found.status}]{detail}\n{shown}", f"code_{found.status}")

"""The model's tools: shell, job_start, job_read, job_stop and sandbox_escalate."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..approvals import ApprovalRequest, Decision, request_approval
from ..tools import MUTATING, REQUIRES_APPROVAL, ToolDefinition, ToolFailure, define_tool
from ..tools.results import FailureCode
from ..tools.run import ToolRunContext
from .chain import Confined
from .errors import SANDBOX_UNAVAILABLE, SandboxUnavailableError
from .jobs import JobError, JobRead
from .keys import (
    COMMAND_DONE,
    COMMAND_RUN,
    SANDBOX,
    SANDBOX_MODE,
    SANDBOX_REFUSED,
    CommandDoneData,
    CommandRunData,
    SandboxModeData,
    SandboxRefusedData,
)
from .processes import CommandResult, run_once
from .service import AgentSandbox, SandboxSettings
from .tiers import EscalationRefusedError, Tier

COMMAND_FAILED = "command_failed"
COMMAND_TIMEOUT = "command_timeout"
PROCESS_LIMIT = "process_limit"
ESCALATION_REFUSED = "escalation_refused"
JOB_ERROR = "job_error"
COMMAND_TOOLS = frozenset({"shell", "job_start"})
"""The tools that start processes (and so need a working sandbox provider)."""
NETWORK = "network"
"""Approval requests for network access are named `<tool>:network`."""

_REFUSAL = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|Network is unreachable|"
    r"Temporary failure in name resolution|Could not resolve host|Name or service not known"
)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _command_field() -> Any:
    return Field(min_length=1, max_length=20_000, description="A /bin/sh command line.")


def _network_field() -> Any:
    return Field(
        default=False,
        description="Open the network for this one command (needs the user's approval).",
    )


class ShellParams(_Params):
    command: str = _command_field()
    timeout_s: float | None = Field(
        default=None, gt=0, description="Kill the command after this many seconds."
    )
    network: bool = _network_field()


class JobStartParams(_Params):
    command: str = _command_field()
    network: bool = _network_field()


class JobReadParams(_Params):
    job_id: str = Field(min_length=1, max_length=64)
    wait_s: float = Field(
        default=0, ge=0, le=60, description="Wait up to this long for new output."
    )


class JobStopParams(_Params):
    job_id: str = Field(min_length=1, max_length=64)


class EscalateParams(_Params):
    tier: Tier = Field(description="The tier wanted: one step wider than the current one.")
    reason: str = Field(min_length=1, max_length=2000, description="Why, for the user.")


def _sandbox(run: ToolRunContext) -> AgentSandbox:
    return run.ctx.get(SANDBOX).for_context(run.ctx)


def _failure_code(decision: Decision) -> str:
    if decision is Decision.REJECTED:
        return FailureCode.REJECTED
    if decision is Decision.CANCELLED:
        return FailureCode.CANCELLED
    return FailureCode.APPROVAL_UNAVAILABLE


async def _network_allowed(run: ToolRunContext, wanted: bool) -> ToolFailure | None:
    if not wanted:
        return None
    request = ApprovalRequest(
        tool=f"{run.name}:{NETWORK}",
        call_id=run.call_id,
        arguments=run.arguments,
        session_id=run.session_id,
        reason="open the network for this one command",
        tags=frozenset({NETWORK}),
    )
    decided = await request_approval(run.ctx, request)
    if decided.decision.allowed:
        return None
    return ToolFailure(
        f"network access was not granted ({decided.decision}): {decided.message}; "
        "run the command without network",
        _failure_code(decided.decision),
    )


def _refused(
    sandbox: AgentSandbox, run: ToolRunContext, error: SandboxUnavailableError
) -> ToolFailure:
    sandbox.record(
        run.ctx,
        SANDBOX_REFUSED,
        SandboxRefusedData(call_id=run.call_id, code=error.code, message=str(error)),
    )
    return ToolFailure(str(error), SANDBOX_UNAVAILABLE)


def _hint(sandbox: AgentSandbox, confined: Confined, output: str) -> str:
    if not _REFUSAL.search(output):
        return ""
    return (
        f"\n(the sandbox may have refused this: {confined.summary}. Files outside what the tier "
        "allows cannot be changed; ask for the next tier with sandbox_escalate if the task "
        "needs it, or run with network: true if it needs the network)"
    )


def _shell_result(
    sandbox: AgentSandbox, confined: Confined, result: CommandResult, timeout_s: float
) -> str | ToolFailure:
    limit = result.limit
    if limit is not None and limit.killed:
        return ToolFailure(f"{limit.note()}; output so far:\n{result.output}", PROCESS_LIMIT)
    shown = (
        result if limit is None else replace(result, output=f"({limit.note()})\n{result.output}")
    )
    return _ended(sandbox, confined, shown, timeout_s)


def _ended(
    sandbox: AgentSandbox, confined: Confined, result: CommandResult, timeout_s: float
) -> str | ToolFailure:
    if result.timed_out:
        return ToolFailure(
            f"the command was killed after {timeout_s:g}s (timeout); output so far:\n"
            f"{result.output}",
            COMMAND_TIMEOUT,
        )
    if result.exit_code != 0:
        return ToolFailure(
            f"the command exited with status {result.exit_code}"
            f"{_hint(sandbox, confined, result.output)}\n{result.output}",
            COMMAND_FAILED,
        )
    return f"exit status 0 [{confined.summary}]\n{result.output}"


def _job_text(read: JobRead) -> str:
    note = f"[{read.dropped} bytes dropped unread]\n" if read.dropped else ""
    more = f"\n[{read.pending} more bytes waiting: read again]" if read.pending else ""
    return f"{read.id}: {read.status}\n{note}{read.output}{more}"


def sandbox_tools(
    settings: SandboxSettings, *, approve_commands: bool
) -> list[ToolDefinition[Any]]:
    """The sandbox's tools; `approve_commands` tags shell and job_start for the approval policy."""
    command_tags = (MUTATING, REQUIRES_APPROVAL) if approve_commands else (MUTATING,)
    budget = settings.output_budget

    async def shell(args: ShellParams, run: ToolRunContext) -> str | ToolFailure:
        refusal = await _network_allowed(run, args.network)
        if refusal is not None:
            return refusal
        sandbox = _sandbox(run)
        timeout_s = min(args.timeout_s or settings.timeout_s, settings.max_timeout_s)
        try:
            confined, policy = await sandbox.confine(args.command, network=args.network)
        except SandboxUnavailableError as error:
            return _refused(sandbox, run, error)
        sandbox.record(
            run.ctx,
            COMMAND_RUN,
            CommandRunData(
                call_id=run.call_id,
                command=args.command,
                tier=str(policy.tier),
                network=policy.network,
                provider=confined.provider,
            ),
        )
        result = await run_once(
            sandbox.owner,
            confined.argv,
            sandbox.env(policy),
            policy.workspace,
            timeout_s=timeout_s,
            budget=budget,
        )
        sandbox.record(
            run.ctx,
            COMMAND_DONE,
            CommandDoneData(
                call_id=run.call_id,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                output_bytes=result.output_bytes,
            ),
        )
        return _shell_result(sandbox, confined, result, timeout_s)

    async def job_start(args: JobStartParams, run: ToolRunContext) -> str | ToolFailure:
        refusal = await _network_allowed(run, args.network)
        if refusal is not None:
            return refusal
        sandbox = _sandbox(run)
        try:
            job, confined = await sandbox.start_job(args.command, network=args.network)
        except SandboxUnavailableError as error:
            return _refused(sandbox, run, error)
        except JobError as error:
            return ToolFailure(str(error), JOB_ERROR)
        sandbox.record(
            run.ctx,
            COMMAND_RUN,
            CommandRunData(
                call_id=run.call_id,
                command=args.command,
                tier=str(sandbox.tier),
                network=args.network,
                provider=confined.provider,
                job=job.id,
            ),
        )
        return (
            f"started {job.id} [{confined.summary}]; read its output with job_read and stop "
            "it with job_stop"
        )

    async def job_read(args: JobReadParams, run: ToolRunContext) -> str | ToolFailure:
        sandbox = _sandbox(run)
        try:
            read = await sandbox.jobs.read(args.job_id, most=budget, wait_s=args.wait_s)
        except JobError as error:
            return ToolFailure(str(error), JOB_ERROR)
        job = sandbox.jobs.get(read.id)
        if job.running:  # an ended job's state was logged when it ended
            sandbox.record_job(run.ctx, job)
        return _job_text(read)

    async def job_stop(args: JobStopParams, run: ToolRunContext) -> str | ToolFailure:
        sandbox = _sandbox(run)
        try:
            read = await sandbox.jobs.stop(args.job_id, most=budget)
        except JobError as error:
            return ToolFailure(str(error), JOB_ERROR)
        sandbox.record(
            run.ctx,
            COMMAND_DONE,
            CommandDoneData(call_id=run.call_id, job=read.id, status=read.status),
        )
        return _job_text(read)

    async def sandbox_escalate(args: EscalateParams, run: ToolRunContext) -> str | ToolFailure:
        sandbox = _sandbox(run)
        current = sandbox.tier
        try:
            needs_approval = sandbox.needs_approval(args.tier)
        except EscalationRefusedError as error:
            return ToolFailure(str(error), ESCALATION_REFUSED)
        if needs_approval:
            request = ApprovalRequest(
                tool=run.name,
                call_id=run.call_id,
                arguments=run.arguments,
                session_id=run.session_id,
                reason=f"widen the sandbox from {current} to {args.tier}: {args.reason}",
            )
            decided = await request_approval(run.ctx, request)
            if not decided.decision.allowed:
                return ToolFailure(
                    f"the sandbox stays {current} ({decided.decision}): {decided.message}",
                    _failure_code(decided.decision),
                )
        sandbox.tier = args.tier
        sandbox.record(
            run.ctx,
            SANDBOX_MODE,
            SandboxModeData(call_id=run.call_id, tier=str(args.tier), previous=str(current)),
        )
        return f"the sandbox tier is now {args.tier} (was {current})"

    tool_timeout = settings.max_timeout_s + 30
    return [
        define_tool(
            "shell",
            "Run a /bin/sh command in the project folder inside the sandbox and return its "
            f"exit status and output (at most {budget} bytes are shown: head and tail). "
            "No network unless network is true (asks the user).",
            ShellParams,
            shell,
            timeout_s=tool_timeout,
            tags=command_tags,
        ),
        define_tool(
            "job_start",
            "Start a long-running /bin/sh command in the sandbox in the background; returns a "
            "job id for job_read and job_stop.",
            JobStartParams,
            job_start,
            tags=command_tags,
        ),
        define_tool(
            "job_read",
            "Read a background job's new output since the last read, and whether it still runs.",
            JobReadParams,
            job_read,
            concurrency_safe=True,
            timeout_s=90,
        ),
        define_tool(
            "job_stop",
            "Stop a background job (kills it and everything it started); returns its last output.",
            JobStopParams,
            job_stop,
        ),
        define_tool(
            "sandbox_escalate",
            "Ask the user to widen the sandbox by one tier: read-only -> workspace-write -> "
            "full. Skipping a tier is refused. A narrower tier is set without asking.",
            EscalateParams,
            sandbox_escalate,
        ),
    ]

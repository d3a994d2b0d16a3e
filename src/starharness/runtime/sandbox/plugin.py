"""SandboxPlugin: the provider chain, the SANDBOX service and the shell and job tools."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..kernel import Context, Next, Plugin
from ..kernel.events import WaterfallListener
from ..loop.hooks import AGENT_CREATED
from ..prompt import PROMPT, TOOL_GUIDANCE_ORDER
from ..tools import TOOL_PRE_EXECUTE, TOOLS, PreExecute, ToolDefinition
from ..workspace.plugin import WORKSPACE
from .bubblewrap import BubblewrapProvider
from .chain import SandboxChain
from .errors import SandboxUnavailableError
from .keys import SANDBOX
from .landlock import LandlockProvider
from .policy import default_hidden
from .processes import DEFAULT_MAX_PROCESSES
from .provider import SandboxProvider
from .seatbelt import SeatbeltProvider
from .service import SANDBOX_RECORD, SandboxRecord, SandboxService, SandboxSettings
from .tiers import Tier
from .tools import COMMAND_TOOLS, sandbox_tools
from .unconfined import UNCONFINED_WARNING, UnconfinedProvider

_log = logging.getLogger("starharness.runtime.sandbox")

ProviderName = Literal["bubblewrap", "landlock", "seatbelt", "none"]
GUIDANCE_SECTION = "sandbox.guidance"


class SandboxConfig(BaseModel):
    """Which providers to try, the starting tier and the limits of one command."""

    model_config = ConfigDict(extra="forbid")

    providers: list[ProviderName] = ["bubblewrap", "landlock", "seatbelt"]
    """Tried in order; the first that works on this machine confines every command."""
    dangerously_run_unconfined: bool = False
    """Required to list `none`: commands then run with the user's files, network and keys."""
    tier: Tier = Tier.READ_ONLY
    """Where each agent starts; sandbox_escalate widens it one approved step at a time."""
    max_tier: Tier = Tier.FULL
    """No escalation goes above this."""
    approve_commands: bool = True
    """Tag shell and job_start requires-approval, so the approval policy asks for each."""
    root: str | None = None
    """The project folder when the profile has no workspace row (null: the current directory)."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_timeout_s: float = Field(default=600.0, gt=0)
    output_budget_bytes: int = Field(default=30_000, ge=256)
    job_buffer_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_jobs: int = Field(default=8, ge=1)
    max_processes: int | None = Field(default=DEFAULT_MAX_PROCESSES, ge=8)
    """Processes (threads too, under a cgroup) one command, job or code-mode program may run at
    once: a pids cgroup refuses more where one is writable, else the command is killed past it.
    null: no cap."""
    shell: str = "/bin/sh"
    pass_env: list[str] = []
    """More environment variables commands may see (all others are dropped)."""
    hide: list[str] = []
    """More paths commands may not read (below the full tier)."""
    writable: list[str] = []
    """More folders writable from workspace-write on (`~` is expanded; missing ones are skipped)."""
    bwrap: str | None = None
    """The bwrap executable; null finds it on PATH."""
    guidance: bool = True
    tools: bool = True
    """Register shell, the job tools and sandbox_escalate for every agent; false: provide only
    the sandbox (for code mode), as a game server does, whose NPCs must never get a shell."""

    @model_validator(mode="after")
    def _check(self) -> SandboxConfig:
        if "none" in self.providers and not self.dangerously_run_unconfined:
            raise ValueError(
                "provider 'none' runs commands unconfined; it needs "
                "dangerously_run_unconfined: true next to it"
            )
        if not self.providers:
            raise ValueError("providers is empty: list at least one sandbox provider")
        if self.tier.rank > self.max_tier.rank:
            raise ValueError(f"tier {self.tier} is above max_tier {self.max_tier}")
        return self

    def settings(self) -> SandboxSettings:
        extra = tuple(Path(path).expanduser() for path in self.hide)
        return SandboxSettings(
            tier=self.tier,
            ceiling=self.max_tier,
            timeout_s=min(self.timeout_s, self.max_timeout_s),
            max_timeout_s=self.max_timeout_s,
            output_budget=self.output_budget_bytes,
            job_buffer=self.job_buffer_bytes,
            max_jobs=self.max_jobs,
            max_processes=self.max_processes,
            shell=self.shell,
            env=tuple(self.pass_env),
            hidden=(*default_hidden(), *extra),
            writable=tuple(Path(path).expanduser() for path in self.writable),
        )

    def build_providers(self) -> list[SandboxProvider]:
        built: dict[str, Any] = {
            "bubblewrap": lambda: BubblewrapProvider(self.bwrap),
            "landlock": LandlockProvider,
            "seatbelt": SeatbeltProvider,
            "none": UnconfinedProvider,
        }
        return [built[name]() for name in self.providers]


class SandboxPlugin(Plugin[SandboxConfig]):
    """Provides SANDBOX and registers shell, job_start, job_read, job_stop, sandbox_escalate."""

    Config = SandboxConfig
    inject = (TOOLS,)
    provides = (SANDBOX,)

    async def setup(self, ctx: Context, config: SandboxConfig) -> None:
        workspace = ctx.maybe(WORKSPACE)
        if workspace is not None:
            root = workspace.root
            await asyncio.to_thread(workspace.hidden.add, *map(Path, config.hide))
        else:
            root = await asyncio.to_thread(_resolve_root, config.root)
        settings = config.settings()
        service = SandboxService(SandboxChain(config.build_providers()), settings, root)
        if "none" in config.providers:
            _log.warning(UNCONFINED_WARNING)
        ctx.provide(SANDBOX, service)
        ctx.scope.add(service.aclose)
        ctx.on(AGENT_CREATED, _log_records)
        if not config.tools:
            return
        tools = sandbox_tools(settings, approve_commands=config.approve_commands)
        for definition in tools:
            ctx.get(TOOLS).register(definition)
        ctx.on_waterfall(TOOL_PRE_EXECUTE, _skip_pointless_questions(service, tools))
        prompt = ctx.maybe(PROMPT)
        if config.guidance and prompt is not None:
            text = _guidance(root, settings)
            prompt.section(GUIDANCE_SECTION, TOOL_GUIDANCE_ORDER + 20, lambda _ctx: text)


def _skip_pointless_questions(
    service: SandboxService, tools: list[ToolDefinition[Any]]
) -> WaterfallListener[PreExecute]:
    """Without a working provider, a command is refused anyway: do not ask a person first."""
    commands = {tool for tool in tools if tool.name in COMMAND_TOOLS}

    async def check(call: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        if call.verdict == "ask" and call.tool in commands:
            try:
                await service.chain.provider()
            except SandboxUnavailableError:
                return call.allow()  # the tool answers SANDBOX_UNAVAILABLE; nothing runs
        return await next_(call)

    return check


def _resolve_root(root: str | None) -> Path:
    return Path(root).expanduser().resolve() if root else Path.cwd()


def _log_records(agent: Any) -> None:
    """Sandbox records emitted in an agent's own layer go into that agent's session log."""
    layer = agent.ctx

    def log(record: SandboxRecord) -> None:
        if record.layer is layer:
            agent.log(record.type, record.data)  # typed where it was recorded

    layer.on(SANDBOX_RECORD, log)


def _guidance(root: Path, settings: SandboxSettings) -> str:
    return (
        f"Commands (shell, job_start) run in a sandbox in {root}, starting at tier "
        f"{settings.tier}: read-only lets you read files and write only in $TMPDIR; "
        "workspace-write also lets you change the project folder; full lifts the file limits. "
        "The network is off unless a command asks for it (network: true) and the user agrees. "
        "Widen the tier with sandbox_escalate, one step at a time, only when the task needs it."
    )

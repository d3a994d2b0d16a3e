"""SANDBOX: one chain of providers for the process, and per agent a tier, a temp folder and jobs."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..kernel import Context, Event
from ..session import EventKind
from ..workspace.hidden import secret_files
from .chain import Confined, SandboxChain
from .jobs import Job, JobTable
from .keys import JOB_STATE, JobStateData
from .policy import SandboxPolicy, confined_env, default_hidden
from .processes import (
    DEFAULT_MAX_PROCESSES,
    CommandResult,
    ProcessOwner,
    forget_folder,
    remove_with_harness,
    run_once,
)
from .tiers import Tier, check_escalation


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The plugin's config, as plain values."""

    tier: Tier = Tier.READ_ONLY
    ceiling: Tier = Tier.FULL
    timeout_s: float = 120.0
    max_timeout_s: float = 600.0
    output_budget: int = 30_000
    job_buffer: int = 1024 * 1024
    max_jobs: int = 8
    max_processes: int | None = DEFAULT_MAX_PROCESSES
    """Processes one command (shell, job, code-mode program) may run at once; None: no cap."""
    shell: str = "/bin/sh"
    env: tuple[str, ...] = ()
    hidden: tuple[Path, ...] = field(default_factory=default_hidden)
    writable: tuple[Path, ...] = ()


D = TypeVar("D", bound=Mapping[str, Any])


@dataclass(frozen=True, slots=True)
class SandboxRecord:
    """A session event the sandbox wants in the calling agent's log (see keys.py for types)."""

    layer: Context | None
    type: EventKind[Any]
    data: Mapping[str, Any]


SANDBOX_RECORD: Event[SandboxRecord] = Event("sandbox/record")
"""Emitted on the calling agent's context; the plugin logs it to that agent's session."""


class SandboxService:
    """`ctx.get(SANDBOX).for_context(ctx)` is the calling agent's own AgentSandbox."""

    def __init__(self, chain: SandboxChain, settings: SandboxSettings, workspace: Path) -> None:
        self.chain = chain
        self.settings = settings
        self.workspace = workspace
        self._agents: dict[int, AgentSandbox] = {}
        self._global: AgentSandbox | None = None

    def hide(self, *paths: Path) -> None:
        """Hide `paths` too from every command confined from now on (a host's own files)."""
        known = set(self.settings.hidden)
        added = tuple(p for p in (Path(path).resolve() for path in paths) if p not in known)
        if added:
            self.settings = replace(self.settings, hidden=(*self.settings.hidden, *added))

    def for_context(self, ctx: Context) -> AgentSandbox:
        """The AgentSandbox of the agent layer `ctx` belongs to (the global one outside agents)."""
        layer = ctx.layer
        if layer is None:
            if self._global is None:
                self._global = AgentSandbox(self, None)
            return self._global
        found = self._agents.get(id(layer))
        if found is None:
            found = self._agents[id(layer)] = AgentSandbox(self, layer)
            key = id(layer)

            async def forget() -> None:
                gone = self._agents.pop(key, None)
                if gone is not None:
                    await gone.aclose()

            layer.scope.add(forget)
        return found

    async def aclose(self) -> None:
        for agent in list(self._agents.values()):
            await agent.aclose()
        self._agents.clear()
        if self._global is not None:
            await self._global.aclose()


class AgentSandbox:
    """One agent's view: its tier, its private temp folder, its processes and jobs."""

    def __init__(self, service: SandboxService, layer: Context | None) -> None:
        self.service = service
        self.layer = layer
        settings = service.settings
        self.tier = settings.tier
        self.owner = ProcessOwner(settings.max_processes)
        self.jobs = JobTable(
            self.owner,
            max_jobs=settings.max_jobs,
            buffer_bytes=settings.job_buffer,
            on_end=self._job_ended,
        )
        self._temp: Path | None = None
        self._lock = asyncio.Lock()

    @property
    def settings(self) -> SandboxSettings:
        return self.service.settings

    def record(self, ctx: Context, kind: EventKind[D], data: D) -> None:
        """Have `data` logged as a `kind` event in the calling agent's session."""
        ctx.emit(SANDBOX_RECORD, SandboxRecord(self.layer, kind, data))

    def record_job(self, ctx: Context, job: Job) -> None:
        """Log `job`'s state and latest output (what a display of the session's jobs shows)."""
        data = JobStateData(
            job=job.id,
            command=job.command,
            state=job.state,
            exit_code=job.exit_code,
            tail=job.tail.text(),
        )
        self.record(ctx, JOB_STATE, data)

    def _job_ended(self, job: Job) -> None:
        # A job ends outside any tool call, so its record goes to the agent's own layer.
        if self.layer is not None:
            self.record_job(self.layer, job)

    def needs_approval(self, requested: Tier) -> bool:
        """True for a one-step widening; EscalationRefusedError for a skip or a step too high."""
        return check_escalation(self.tier, requested, self.settings.ceiling)

    async def temp_dir(self) -> Path:
        async with self._lock:
            if self._temp is None:
                self._temp = Path(
                    await asyncio.to_thread(tempfile.mkdtemp, prefix="star-harness-sandbox-")
                )
                remove_with_harness(self._temp)
            return self._temp

    async def policy(self, *, network: bool) -> SandboxPolicy:
        return SandboxPolicy(
            tier=self.tier,
            workspace=self.service.workspace,
            temp_dir=await self.temp_dir(),
            network=network,
            # The project's .env files as they are now (one list with the file tools: hidden.py).
            hidden=(
                *self.settings.hidden,
                *await asyncio.to_thread(secret_files, self.service.workspace),
            ),
            writable=self.settings.writable,
        )

    async def confine(self, command: str, *, network: bool) -> tuple[Confined, SandboxPolicy]:
        """Wrap `command` for the current tier; SandboxUnavailableError: nothing is spawned."""
        policy = await self.policy(network=network)
        argv: Sequence[str] = (self.settings.shell, "-c", command)
        return await self.service.chain.confine(argv, policy), policy

    def env(self, policy: SandboxPolicy) -> dict[str, str]:
        return confined_env(policy, passed=self.settings.env)

    async def run(
        self, command: str, *, network: bool = False, timeout_s: float | None = None
    ) -> tuple[CommandResult, Confined]:
        confined, policy = await self.confine(command, network=network)
        result = await run_once(
            self.owner,
            confined.argv,
            self.env(policy),
            self.service.workspace,
            timeout_s=timeout_s or self.settings.timeout_s,
            budget=self.settings.output_budget,
        )
        return result, confined

    async def start_job(self, command: str, *, network: bool = False) -> tuple[Job, Confined]:
        confined, policy = await self.confine(command, network=network)
        job = await self.jobs.start(
            confined.argv,
            self.env(policy),
            self.service.workspace,
            command=command,
            provider=confined.provider,
        )
        return job, confined

    async def aclose(self) -> None:
        await self.jobs.aclose()
        await self.owner.aclose()
        temp, self._temp = self._temp, None
        if temp is not None:
            await asyncio.to_thread(shutil.rmtree, temp, True)
            forget_folder(temp)

"""Background jobs: start a confined command, read its output as it comes, stop it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import StarHarnessError
from .output import Tail, Unread
from .processes import ProcessLimit, ProcessOwner

_READ_SIZE = 65536
TAIL_BYTES = 2000
"""How much of a job's latest output its state events carry (for displays, not the model)."""


class JobError(StarHarnessError):
    """A job request that cannot be served (unknown id, too many jobs); the message says why."""


@dataclass(slots=True)
class Job:
    """One background command; its reader task fills `unread` until the output ends."""

    id: str
    command: str
    provider: str
    process: asyncio.subprocess.Process
    unread: Unread
    tail: Tail = field(default_factory=lambda: Tail(TAIL_BYTES))
    started: float = field(default_factory=time.monotonic)
    reader: asyncio.Task[None] | None = None
    exit_code: int | None = None
    stopped: bool = False
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when output arrives or the output ends (job_read waits on it)."""
    limit: ProcessLimit | None = None
    """Set when the job met its process limit (forks refused, or killed for it)."""

    @property
    def running(self) -> bool:
        return self.exit_code is None and not self.stopped

    def status(self) -> str:
        if self.stopped:
            return "stopped"
        if self.exit_code is None:
            return "running"
        note = f" ({self.limit.note()})" if self.limit is not None else ""
        return f"exited with {self.exit_code}{note}"

    @property
    def state(self) -> Literal["running", "exited", "stopped"]:
        """running, exited or stopped (status() adds the exit code)."""
        if self.stopped:
            return "stopped"
        return "running" if self.exit_code is None else "exited"


@dataclass(frozen=True, slots=True)
class JobRead:
    """What one read returns: new output, how much was dropped unread, and the job's status."""

    id: str
    output: str
    dropped: int
    status: str
    pending: int
    """Unread bytes still waiting after this read."""


class JobTable:
    """The jobs of one agent. `aclose` stops them all (the agent ended).

    `on_end` hears of each job that exits or is stopped, once (to log it)."""

    def __init__(
        self,
        owner: ProcessOwner,
        *,
        max_jobs: int,
        buffer_bytes: int,
        on_end: Callable[[Job], None] | None = None,
    ) -> None:
        self._owner = owner
        self._on_end = on_end
        self._max_jobs = max_jobs
        self._buffer_bytes = buffer_bytes
        self._jobs: dict[str, Job] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._jobs)

    def list(self) -> list[Job]:
        return list(self._jobs.values())

    async def start(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, *, command: str, provider: str
    ) -> Job:
        if sum(1 for job in self._jobs.values() if job.running) >= self._max_jobs:
            raise JobError(
                f"{self._max_jobs} jobs are already running; stop one with job_stop first"
            )
        process = await self._owner.spawn(argv, env, cwd)
        job = Job(f"job-{self._next}", command, provider, process, Unread(self._buffer_bytes))
        self._next += 1
        job.reader = asyncio.create_task(self._follow(job), name=f"sandbox {job.id}")
        self._jobs[job.id] = job
        return job

    async def _follow(self, job: Job) -> None:
        stream = job.process.stdout
        if stream is not None:
            while data := await stream.read(_READ_SIZE):
                job.unread.feed(data)
                job.tail.feed(data)
                job.arrived.set()
        job.arrived.set()
        code = await self._owner.reaped(job.process)
        if not job.stopped:
            job.limit = self._owner.limit_met(job.process)
            job.exit_code = code
            self._ended(job)

    def _ended(self, job: Job) -> None:
        if self._on_end is not None:
            self._on_end(job)

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise JobError(f"no job {job_id!r} (jobs: {known})")
        return job

    async def read(self, job_id: str, *, most: int, wait_s: float = 0.0) -> JobRead:
        """New output since the last read; waits up to `wait_s` for some if there is none yet."""
        job = self.get(job_id)
        reader = job.reader
        if wait_s > 0 and not len(job.unread) and reader is not None and not reader.done():
            job.arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait_s):
                    await job.arrived.wait()
        text, dropped = job.unread.take(most)
        return JobRead(job.id, text, dropped, job.status(), len(job.unread))

    async def stop(self, job_id: str, *, most: int) -> JobRead:
        """Kill the job's process group, reap it, and return what it printed last."""
        job = self.get(job_id)
        await self._halt(job)
        text, dropped = job.unread.take(most)
        del self._jobs[job.id]
        return JobRead(job.id, text, dropped, job.status(), len(job.unread))

    async def _halt(self, job: Job) -> None:
        halted = job.exit_code is None and not job.stopped
        if halted:
            job.stopped = True
        await self._owner.kill(job.process)
        reader = job.reader
        if reader is not None and not reader.done():
            reader.cancel()
        if reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if halted:
            self._ended(job)

    async def aclose(self) -> None:
        for job in list(self._jobs.values()):
            await asyncio.shield(self._halt(job))
        self._jobs.clear()

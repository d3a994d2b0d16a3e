"""Spawning confined commands: every process is owned, killed with its group, and reaped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .output import HeadTail

_READ_SIZE = 65536
_DRAIN_AFTER_EXIT_S = 1.0


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a one-shot command ended and what it printed (stdout and stderr interleaved)."""

    exit_code: int | None
    """None when it was killed for its timeout."""
    output: str
    timed_out: bool = False
    output_bytes: int = 0


class ProcessOwner:
    """Owns every process it spawns; `aclose` kills and reaps those still running."""

    def __init__(self) -> None:
        self._running: set[asyncio.subprocess.Process] = set()
        self.spawned = 0
        """How many processes were ever started (tests prove a refusal started none)."""
        self._closed = False

    @property
    def running(self) -> int:
        return len(self._running)

    async def spawn(
        self, argv: list[str], env: Mapping[str, str], cwd: Path
    ) -> asyncio.subprocess.Process:
        if self._closed:
            raise RuntimeError("the sandbox is closed; no more commands run")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            # Its own process group, so one signal reaches everything it started.
            start_new_session=True,
        )
        self.spawned += 1
        self._running.add(process)
        return process

    async def kill(self, process: asyncio.subprocess.Process) -> int:
        """Kill the process group (bwrap's PID namespace dies with it) and reap it."""
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        code = await process.wait()
        self._running.discard(process)
        return code

    async def reaped(self, process: asyncio.subprocess.Process) -> int:
        """Wait for a process to end by itself, then kill what is left of its group."""
        code = await process.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        self._running.discard(process)
        return code

    async def aclose(self) -> None:
        self._closed = True
        for process in list(self._running):
            await asyncio.shield(self.kill(process))


async def run_once(
    owner: ProcessOwner,
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    timeout_s: float,
    budget: int,
) -> CommandResult:
    """Run to completion or timeout, keeping at most `budget` bytes of output."""
    process = await owner.spawn(argv, env, cwd)
    kept = HeadTail(budget)
    stdout = process.stdout
    if stdout is None:
        raise RuntimeError("the command's output pipe is missing")
    reader = asyncio.ensure_future(_drain(stdout, kept))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                code: int | None = await owner.reaped(process)
        except TimeoutError:
            timed_out = True
            await owner.kill(process)
            code = None
        # A background child may hold the pipe open after the process ended; give it a moment.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_AFTER_EXIT_S):
                await asyncio.shield(reader)
    finally:
        if process.returncode is None:
            await asyncio.shield(owner.kill(process))
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    return CommandResult(code, kept.text(), timed_out, kept.total)


async def _drain(stream: asyncio.StreamReader, sink: HeadTail) -> None:
    while True:
        data = await stream.read(_READ_SIZE)
        if not data:
            return
        sink.feed(data)

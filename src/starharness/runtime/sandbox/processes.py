"""Spawning confined commands: every process is owned, killed with its group, and reaped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .collect import collected
from .output import HeadTail
from .reaper import kill_tree

REAPER = Path(__file__).with_name("reaper.py")
_log = logging.getLogger("starharness.runtime.sandbox")


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a one-shot command ended and what it printed (stdout and stderr interleaved)."""

    exit_code: int | None
    """None when it was killed for its timeout."""
    output: str
    timed_out: bool = False
    output_bytes: int = 0


class _Reaper:
    """One reaper process per harness process (see reaper.py); restarted if it ever dies."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _send(self, line: str) -> None:
        with self._lock:
            for _ in range(2):
                process = self._process
                if process is None or process.poll() is not None or process.stdin is None:
                    process = self._process = self._start()
                if process is None or process.stdin is None:
                    return
                try:
                    os.write(process.stdin.fileno(), line.encode())
                    return
                except OSError:
                    self._process = None

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(REAPER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            _log.exception("cannot start the reaper; commands may outlive a killed harness")
            return None

    def register(self, pid: int) -> None:
        self._send(f"+{pid}\n")

    def unregister(self, pid: int) -> None:
        self._send(f"-{pid}\n")

    def register_folder(self, path: Path) -> None:
        self._send(f"+{path}\n")

    def unregister_folder(self, path: Path) -> None:
        self._send(f"-{path}\n")


_REAPER = _Reaper()


def remove_with_harness(path: Path) -> None:
    """Have the reaper delete `path` (absolute, no newline) if the harness dies first."""
    if "\n" not in str(path):
        _REAPER.register_folder(path)


def forget_folder(path: Path) -> None:
    """The harness removed `path` itself."""
    if "\n" not in str(path):
        _REAPER.unregister_folder(path)


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
        self,
        argv: list[str],
        env: Mapping[str, str],
        cwd: Path,
        *,
        pipes: bool = False,
        line_limit: int = 65536,
    ) -> asyncio.subprocess.Process:
        """Start `argv` owned; `pipes` gives it a stdin pipe and keeps stderr apart from stdout."""
        if self._closed:
            raise RuntimeError("the sandbox is closed; no more commands run")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            limit=line_limit,
            # Its own process group, so one signal reaches everything it started.
            start_new_session=True,
        )
        self.spawned += 1
        self._running.add(process)
        _REAPER.register(process.pid)
        return process

    async def kill(self, process: asyncio.subprocess.Process) -> int:
        """Freeze and kill the process, its group and every descendant, then reap it."""
        if process.returncode is None:
            # Not process.kill(): Popen polls first, reaping the child behind asyncio's back
            # (which then reports exit status 255 for it).
            kill_tree(process.pid)
        code = await process.wait()
        self._forget(process)
        return code

    def _forget(self, process: asyncio.subprocess.Process) -> None:
        if process in self._running:
            self._running.discard(process)
            _REAPER.unregister(process.pid)

    async def reaped(self, process: asyncio.subprocess.Process) -> int:
        """Wait for a process to end by itself, then kill what is left of its group."""
        code = await process.wait()
        self._forget(process)
        # Once reaped, its PID (= its group's id) may be reused; never signal one of ours.
        if all(other.pid != process.pid for other in self._running):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
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
    timed_out = False
    code: int | None = None
    async with collected(owner, process, process.stdout, kept):
        try:
            async with asyncio.timeout(timeout_s):
                code = await owner.reaped(process)
        except TimeoutError:
            timed_out = True
            await owner.kill(process)
    return CommandResult(code, kept.text(), timed_out, kept.total)

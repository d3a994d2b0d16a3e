"""One program in the sandbox: spawn the runner, answer its calls, end it at a limit."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sandbox import AgentSandbox, Confined, SandboxPolicy, Tier
from ..sandbox.collect import collected
from ..sandbox.output import HeadTail
from . import guest
from .calls import CodeCall, HostCalls
from .protocol import Broken, Call, End, read_line
from .settings import CodeModeSettings

GUEST_SOURCE = Path(guest.__file__).read_text(encoding="utf-8")
"""The runner's text, handed to `python -c` (no file of the host has to be readable)."""
HOST_PACKAGE = Path(__file__).resolve().parents[2]
"""The `starharness` package folder, hidden from programs (they get the tools API only)."""

_PREFIX = {
    "error": "the program raised ",
    "blocked": "the program was blocked: ",
    "unconfined": "the program was not run: ",
}


@dataclass(slots=True)
class CodeRun:
    """How a program ended, what it printed and the host calls it made."""

    status: str = "killed"
    """ok, error, memory, cpu, wall, blocked, exit, unconfined, protocol, calls or killed."""
    message: str = ""
    output: str = ""
    output_bytes: int = 0
    exit_code: int | None = None
    calls: list[CodeCall] = field(default_factory=list[CodeCall])
    traceback: str = ""
    cpu_s: float | None = None
    """The program's own CPU time, as its process counted it (None: it could not say)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_LINUX_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# dyld's shared cache and the system frameworks live under /System (untested here).
_MACOS_SYSTEM = ("/System", "/usr", "/bin", "/private/var/db/dyld")
SYSTEM_FILES = tuple(
    Path(p) for p in (_MACOS_SYSTEM if sys.platform == "darwin" else _LINUX_SYSTEM)
)
"""The system's programs and libraries: what an interpreter loads, and no one's data."""


def interpreter_files(python: str) -> tuple[Path, ...]:
    """What a program may read: the system's files and the interpreter's own installation."""
    prefix = Path(os.path.realpath(python)).parent.parent  # <prefix>/bin/python3.x
    if any(prefix.is_relative_to(system) for system in SYSTEM_FILES):
        return SYSTEM_FILES
    return (*SYSTEM_FILES, prefix)


def code_policy(policy: SandboxPolicy, python: str) -> SandboxPolicy:
    """Always read-only and offline, whatever the agent's tier, reading only what `python`
    needs: no project, home or host file (the host package is hidden as well)."""
    return dataclasses.replace(
        policy,
        tier=Tier.READ_ONLY,
        network=False,
        hidden=(*policy.hidden, HOST_PACKAGE),
        readable=interpreter_files(python),
    )


async def confine(
    sandbox: AgentSandbox, settings: CodeModeSettings
) -> tuple[Confined, SandboxPolicy]:
    """Wrap the runner; SandboxUnavailableError when no provider works (nothing is spawned)."""
    policy = code_policy(await sandbox.policy(network=False), settings.python)
    argv = [settings.python, "-I", "-S", "-B", "-c", GUEST_SOURCE]
    return await sandbox.service.chain.confine(argv, policy), policy


async def run_program(
    sandbox: AgentSandbox,
    confined: Confined,
    policy: SandboxPolicy,
    program: str,
    calls: HostCalls,
    settings: CodeModeSettings,
) -> CodeRun:
    """Run `program` to its end or a limit; never leaves a process behind."""
    owner = sandbox.owner
    process = await owner.spawn(
        confined.argv,
        sandbox.env(policy),
        policy.start_dir,
        pipes=True,
        line_limit=settings.line_bytes,
    )
    kept = HeadTail(settings.output_bytes)
    found = CodeRun(calls=calls.made)
    async with collected(owner, process, process.stderr, kept):
        setup = {
            "program": program,
            "tools": sorted(calls.allowed),
            "limits": settings.guest_limits(),
        }
        await _send(process, setup)
        try:
            async with asyncio.timeout(settings.wall_s) as deadline:
                serve = _Serve(process, calls, found, settings, deadline)
                await serve.run()
                if serve.ended_by_host:
                    found.exit_code = await owner.kill(process)
                else:
                    found.exit_code = await owner.reaped(process)
        except TimeoutError:
            found.status = "wall"
            found.message = (
                f"the program was stopped at its wall-clock limit ({settings.wall_s:g}s)"
            )
            await owner.kill(process)
    found.output = kept.text()
    found.output_bytes = kept.total
    _explain_exit(found, settings)
    return found


class _Serve:
    """Reads the runner's lines and answers each call until it ends or breaks the protocol."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        calls: HostCalls,
        found: CodeRun,
        settings: CodeModeSettings,
        deadline: asyncio.Timeout,
    ) -> None:
        self._process = process
        self._calls = calls
        self._found = found
        self._settings = settings
        self._deadline = deadline
        self.ended_by_host = False
        """A protocol error or the call limit: the program is killed, not waited for."""

    async def run(self) -> None:
        stdout = self._process.stdout
        if stdout is None:
            raise RuntimeError("the program's protocol pipe is missing")
        while True:
            try:
                line = await stdout.readline()
            except ValueError:
                await self._fatal("protocol", "sent a line over the size limit")
                return
            if not line:
                return
            if not await self._handle(read_line(line)):
                return

    async def _handle(self, message: Call | End | Broken) -> bool:
        if isinstance(message, Broken):
            await self._fatal("protocol", message.why)
            return False
        if isinstance(message, End):
            self._ended(message)
            return True
        if len(self._calls.made) >= self._settings.max_calls:
            limit = self._settings.max_calls
            await self._fatal("calls", f"went over its limit of {limit} tool calls")
            return False
        answer = await self._paused(message.tool, message.args)
        return await _answer(self._process, answer)

    async def _paused(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Host calls (approvals included) do not count against the program's wall time."""
        loop = asyncio.get_running_loop()
        when = self._deadline.when()
        left = None if when is None else when - loop.time()
        self._deadline.reschedule(None)
        try:
            return await self._calls.call(tool, args)
        finally:
            if left is not None:
                self._deadline.reschedule(loop.time() + left)

    def _ended(self, end: End) -> None:
        found = self._found
        found.status = end.kind
        found.message = _PREFIX.get(end.kind, "") + end.message
        found.traceback = end.traceback
        found.cpu_s = end.cpu_s

    async def _fatal(self, status: str, message: str) -> None:
        self.ended_by_host = True
        self._found.status = status
        self._found.message = f"the program {message}"
        await _answer(self._process, {"fatal": f"the host ended the run: {message}"})


async def _send(process: asyncio.subprocess.Process, message: dict[str, Any]) -> bool:
    stdin = process.stdin
    if stdin is None:
        return False
    try:
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        return False  # the program is gone; its exit status says why
    return True


async def _answer(process: asyncio.subprocess.Process, message: dict[str, Any]) -> bool:
    return await _send(process, message)


def _explain_exit(found: CodeRun, settings: CodeModeSettings) -> None:
    """Name the limit behind an exit the runner could not report itself."""
    code = found.exit_code
    if found.status == "ok":
        if code != 0:
            found.status, found.message = "error", f"the program ended with exit status {code}"
        return
    if found.status != "killed":
        found.message = found.message or f"the program ended with exit status {code}"
        return
    number = _signal_of(code)
    if number == signal.SIGXCPU:
        found.status = "cpu"
        found.message = f"the program was stopped at its CPU limit ({settings.cpu_s}s)"
    elif number is not None:
        found.message = (
            f"the program was killed by signal {number} (limits: {settings.cpu_s}s CPU, "
            f"{settings.memory_mb} MB memory)"
        )
    else:
        found.message = f"the program ended with exit status {code} before reporting how"


def _signal_of(code: int | None) -> int | None:
    """A signal number from an exit status: -N from a direct child, 128+N through bwrap."""
    if code is None:
        return None
    if code < 0:
        return -code
    if code > 128:
        return code - 128
    return None

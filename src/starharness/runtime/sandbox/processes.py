"""Spawning confined commands: every process is owned, killed with its whole tree, and reaped.

Each command is started by a holder, `/bin/sh -c HOLDER`, that first joins the command's own
pids cgroup (when one is writable here: cgroups.py) and then runs the provider's argv as its
child and waits for it. The holder matters twice: everything the command forks is inside the
cgroup from birth (so it is counted against `max_processes` and killed with it), and it keeps
bubblewrap's `--die-with-parent` chain intact while the harness is gone (bubblewrap.py): the
outer bwrap dies with the holder, not with the harness, so the reaper still finds the tree.
Without a writable cgroup, a watcher counts the command's tree and kills it past the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import cgroups
from .collect import collected
from .output import HeadTail
from .reaper import descendants, kill_tree

REAPER = Path(__file__).with_name("reaper.py")
_log = logging.getLogger("starharness.runtime.sandbox")

DEFAULT_MAX_PROCESSES = 512
"""Processes (and, under a cgroup, threads) one command may run at once."""
SANDBOX_OVERHEAD = 3
"""The holder, the outer bwrap and the namespace's init: not the command's own."""
HOLDER_SHELL = "/bin/sh"
HOLDER_NAME = "star-harness-holder"
_HOLDER = (
    'if [ -n "$1" ]; then echo 0 2>/dev/null >"$1/cgroup.procs" || '
    '{ echo "sandbox setup failed: cannot join the cgroup $1" >&2; exit 125; }; fi; '
    'shift; "$@"; exit $?'
)
"""Join the cgroup named by $1 (empty: none), then run the rest as a child and wait for it
(`; exit $?` keeps sh from exec'ing it, which would end the holder)."""
_WATCH_INTERVAL_S = 0.25
_CGROUP_EMPTY_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a one-shot command ended and what it printed (stdout and stderr interleaved)."""

    exit_code: int | None
    """None when it was killed for its timeout."""
    output: str
    timed_out: bool = False
    output_bytes: int = 0
    limit: ProcessLimit | None = None
    """Set when the command met its process limit (forks refused, or killed for it)."""


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

    def register_cgroup(self, path: Path) -> None:
        self._send(f"+C{path}\n")

    def unregister_cgroup(self, path: Path) -> None:
        self._send(f"-C{path}\n")


_REAPER = _Reaper()


class _PidsCgroups:
    """The harness process's pids cgroup folder, looked for once (None: no writable one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._looked = False
        self._root: cgroups.PidsRoot | None = None

    def root(self) -> cgroups.PidsRoot | None:
        """Blocking the first time (call in a thread); cached after."""
        with self._lock:
            if not self._looked:
                self._looked = True
                self._root = cgroups.find_pids_root()
                if self._root is None:
                    _log.info(
                        "no writable pids cgroup here: a command's process count is watched "
                        "(and the command killed past its limit) instead of capped"
                    )
                elif "\n" not in str(self._root.path):
                    _REAPER.register_cgroup(self._root.path)
            return self._root

    def new(self, max_processes: int) -> Path | None:
        root = self.root()
        if root is None:
            return None
        return cgroups.create(root, max_processes + SANDBOX_OVERHEAD)


_PIDS = _PidsCgroups()


def pids_cgroup_root() -> cgroups.PidsRoot | None:
    """Where command cgroups are made in this process, or None (blocking the first time)."""
    return _PIDS.root()


@dataclass(slots=True)
class _Owned:
    """What the owner keeps per command besides its Process."""

    cgroup: Path | None
    limit: int | None
    exited: asyncio.Future[None] | None = None
    """Done once the holder has exited (its pipes may stay open longer: see `reaped`)."""
    pidfd: int | None = None
    watch: asyncio.Task[None] | None = None
    killed_over_limit: bool = False
    refused: int = 0


@dataclass(frozen=True, slots=True)
class ProcessLimit:
    """How a command met its process limit."""

    limit: int
    refused: int = 0
    """Process starts the cgroup refused (the command saw EAGAIN and went on)."""
    killed: bool = False
    """The watcher (no cgroup here) killed the command for running more than `limit`."""

    def note(self) -> str:
        if self.killed:
            return (
                f"the command was killed: it ran more than {self.limit} processes at once "
                "(the sandbox's max_processes)"
            )
        return (
            f"the sandbox refused {self.refused} new process(es): a command may run at most "
            f"{self.limit} processes at once (the sandbox's max_processes)"
        )


def remove_with_harness(path: Path) -> None:
    """Have the reaper delete `path` (absolute, no newline) if the harness dies first."""
    if "\n" not in str(path):
        _REAPER.register_folder(path)


def forget_folder(path: Path) -> None:
    """The harness removed `path` itself."""
    if "\n" not in str(path):
        _REAPER.unregister_folder(path)


class ProcessOwner:
    """Owns every process it spawns; `aclose` kills and reaps those still running.

    `max_processes` caps each command's tree (None: no cap): by its pids cgroup where one is
    writable, else by a watcher that kills the command past it."""

    def __init__(self, max_processes: int | None = DEFAULT_MAX_PROCESSES) -> None:
        self._running: dict[asyncio.subprocess.Process, _Owned] = {}
        self._limits: weakref.WeakKeyDictionary[asyncio.subprocess.Process, ProcessLimit] = (
            weakref.WeakKeyDictionary()
        )
        self.max_processes = max_processes
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
        max_processes: int | None = None,
    ) -> asyncio.subprocess.Process:
        """Start `argv` owned; `pipes` gives it a stdin pipe and keeps stderr apart from stdout.

        `max_processes` overrides the owner's limit for this command (a smaller one, say)."""
        if self._closed:
            raise RuntimeError("the sandbox is closed; no more commands run")
        limit = max_processes if max_processes is not None else self.max_processes
        cgroup = await _new_cgroup(limit)
        holder = [HOLDER_SHELL, "-c", _HOLDER, HOLDER_NAME, str(cgroup or ""), *argv]
        try:
            process = await asyncio.create_subprocess_exec(
                *holder,
                stdin=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.STDOUT,
                env=dict(env),
                cwd=cwd,
                limit=line_limit,
                # Its own process group, so one signal reaches everything it started.
                start_new_session=True,
            )
        except BaseException:
            if cgroup is not None:
                await _remove_cgroup(cgroup)
            raise
        self.spawned += 1
        owned = _Owned(cgroup, limit)
        self._running[process] = owned
        _follow_exit(owned, process.pid)
        _REAPER.register(process.pid)
        if cgroup is None and limit is not None:
            owned.watch = asyncio.create_task(
                self._watch(process, owned, limit), name=f"sandbox watch {process.pid}"
            )
        return process

    async def _watch(self, process: asyncio.subprocess.Process, owned: _Owned, limit: int) -> None:
        """No cgroup: count the command's tree now and then; past the limit, kill it all."""
        while process.returncode is None:
            await asyncio.sleep(_WATCH_INTERVAL_S)
            size = await asyncio.to_thread(_tree_size, process.pid)
            if size > limit + SANDBOX_OVERHEAD and process.returncode is None:
                owned.killed_over_limit = True
                kill_tree(process.pid)
                return

    def limit_met(self, process: asyncio.subprocess.Process) -> ProcessLimit | None:
        """How an ended command met its process limit, if it did."""
        return self._limits.get(process)

    async def kill(self, process: asyncio.subprocess.Process) -> int:
        """Kill the process and its whole tree (cgroup, group, descendants), then reap it."""
        owned = self._running.get(process)
        if process.returncode is None:
            # The tree by parent PID first: a holder that has not yet joined its cgroup is in
            # no cgroup. Not process.kill(): Popen polls first, reaping the child behind
            # asyncio's back (which then reports exit status 255 for it).
            kill_tree(process.pid)
        if owned is not None and owned.cgroup is not None:
            # Then every member, found however it forked (and again until empty in _finish).
            await asyncio.to_thread(cgroups.kill_members, owned.cgroup)
        code = await process.wait()
        await self._finish(process)
        return code

    async def _finish(self, process: asyncio.subprocess.Process) -> None:
        """The command's first process ended: end what is left of its tree and forget it."""
        owned = self._running.pop(process, None)
        if owned is None:
            return
        _stop_following(owned)
        if owned.watch is not None:
            owned.watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await owned.watch
        if owned.cgroup is not None:
            owned.refused = await asyncio.to_thread(cgroups.refused, owned.cgroup)
            if await _remove_cgroup(owned.cgroup):
                _REAPER.unregister_cgroup(owned.cgroup)
            else:
                _log.warning("the cgroup %s would not empty; the reaper retries", owned.cgroup)
        _REAPER.unregister(process.pid)
        if owned.limit is not None and (owned.refused or owned.killed_over_limit):
            self._limits[process] = ProcessLimit(
                owned.limit, owned.refused, owned.killed_over_limit
            )

    async def reaped(self, process: asyncio.subprocess.Process) -> int:
        """Wait for a process to end by itself, then kill what is left of its tree.

        A background child may hold the output pipes open, and asyncio's wait() waits for them
        too; so the holder's own exit is awaited first (its pidfd), the rest killed, then it is
        reaped."""
        owned = self._running.get(process)
        if owned is not None and owned.exited is not None:
            await asyncio.shield(owned.exited)
            # Its PID (= its group's id) may be reused once reaped; never signal one of ours.
            if all(other.pid != process.pid for other in self._running if other is not process):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            if owned.cgroup is not None:
                await asyncio.to_thread(cgroups.kill_members, owned.cgroup)
        code = await process.wait()
        await self._finish(process)
        return code

    async def aclose(self) -> None:
        self._closed = True
        for process in list(self._running):
            await asyncio.shield(self.kill(process))


async def _new_cgroup(limit: int | None) -> Path | None:
    if limit is None:
        return None
    try:
        cgroup = await asyncio.to_thread(_PIDS.new, limit)
    except OSError as error:
        _log.warning("cannot make a pids cgroup (%s); the command's tree is watched", error)
        return None
    if cgroup is not None:
        _REAPER.register_cgroup(cgroup)
    return cgroup


async def _remove_cgroup(cgroup: Path) -> bool:
    """Kill every member until the cgroup is empty, then remove it (bounded wait)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _CGROUP_EMPTY_WAIT_S
    while True:
        emptied = await asyncio.to_thread(cgroups.kill_members, cgroup)
        if emptied and await asyncio.to_thread(cgroups.remove, cgroup):
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.01)


def _follow_exit(owned: _Owned, pid: int) -> None:
    """Set `owned.exited` when the holder exits, by its pidfd (none on macOS: not followed)."""
    try:
        owned.pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return
    loop = asyncio.get_running_loop()
    owned.exited = loop.create_future()
    loop.add_reader(owned.pidfd, _stop_following, owned)


def _stop_following(owned: _Owned) -> None:
    if owned.pidfd is not None:
        asyncio.get_running_loop().remove_reader(owned.pidfd)
        os.close(owned.pidfd)
        owned.pidfd = None
    if owned.exited is not None and not owned.exited.done():
        owned.exited.set_result(None)


def _tree_size(pid: int) -> int:
    return 1 + len(descendants({pid}))


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
    return CommandResult(code, kept.text(), timed_out, kept.total, owner.limit_met(process))

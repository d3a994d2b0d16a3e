"""The reaper: a helper process that kills every registered command tree when the harness dies.

Run as `python -I -S reaper.py` with a pipe on stdin. The harness writes `+PID` when it spawns
a command and `-PID` when it has reaped it, `+/PATH` and `-/PATH` for private temp folders,
`+C/PATH` and `-C/PATH` for command cgroups (registered before the command starts). When stdin
ends (the harness exited or was killed, even by SIGKILL), every process of a registered cgroup
and every registered PID with all its descendants is killed, the cgroups and folders are
removed, then the reaper exits.
Standard library only, so it starts fast and needs no installed package.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def kill_tree(pid: int) -> None:
    """SIGSTOP the group and all descendants (so none can fork), then SIGKILL them all.

    Descendants are found by parent PID, so a child that left the group (bwrap's sandbox runs
    in a session of its own; a command may call setsid) is still found. Killing bwrap's child,
    PID 1 of the sandbox's PID namespace, ends everything inside it; stopping bwrap first
    closes the window in which it forks a child that has not yet asked to die with it.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGSTOP)
    frozen: set[int] = set()
    found = {pid}
    while found - frozen:
        for target in found - frozen:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, signal.SIGSTOP)
            frozen.add(target)
        found = frozen | descendants(frozen)
    for target in frozen:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_cgroup(folder: str) -> bool:
    """SIGKILL every process of the cgroup at `folder`; True when it listed none (all gone).

    cgroup v2's `cgroup.kill` ends the whole cgroup at once; v1 has none, so its members are
    killed one by one (a bounded tree: pids.max stops it forking faster than this)."""
    kill_file = os.path.join(folder, "cgroup.kill")  # noqa: PTH118
    if os.path.exists(kill_file):  # noqa: PTH110
        with contextlib.suppress(OSError), open(kill_file, "w") as file:  # noqa: PTH123
            file.write("1")
    try:
        with open(os.path.join(folder, "cgroup.procs"), "rb") as file:  # noqa: PTH118, PTH123
            pids = [int(pid) for pid in file.read().split()]
    except (OSError, ValueError):
        return True
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return not pids


def remove_cgroup(folder: str) -> bool:
    """rmdir the cgroup (the kernel refuses while a process is in it); True when gone."""
    try:
        os.rmdir(folder)  # noqa: PTH106
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def end_cgroups(folders: list[str]) -> None:
    """Kill every member of each cgroup, then remove them, deepest first (bounded wait)."""
    import time  # only now: start-up stays light

    left = sorted(folders, key=len, reverse=True)
    for _ in range(200):
        left = [folder for folder in left if not (kill_cgroup(folder) and remove_cgroup(folder))]
        if not left:
            return
        time.sleep(0.01)


def descendants(roots: set[int]) -> set[int]:
    """Every process below `roots`, by the parent PIDs in /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")  # noqa: PTH208 - plain names, fast, stdlib only
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:  # noqa: PTH123
                stat = file.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found and child not in roots:
                found.add(child)
                todo.append(child)
    return found


def main() -> int:
    # Terminal signals are for the harness; the reaper ends only when its pipe does.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    registered: set[int] = set()
    folders: set[bytes] = set()
    cgroups: set[str] = set()
    for line in sys.stdin.buffer:
        text = line.rstrip(b"\n")
        sign, rest = text[:1], text[1:]
        if rest.startswith(b"C/"):
            name = os.fsdecode(rest[1:])
            (cgroups.add if sign == b"+" else cgroups.discard)(name)
            continue
        if rest.startswith(b"/"):
            (folders.add if sign == b"+" else folders.discard)(rest)
            continue
        with contextlib.suppress(ValueError):
            if sign == b"+":
                registered.add(int(rest))
            elif sign == b"-":
                registered.discard(int(rest))
    # The cgroups first: their members are every process of those commands, however they
    # forked; then the trees of commands started without one.
    end_cgroups(sorted(cgroups))
    for pid in registered:
        kill_tree(pid)
    if folders:
        import shutil  # only now: start-up stays light

        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

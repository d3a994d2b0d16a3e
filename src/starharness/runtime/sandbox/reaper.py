"""The reaper: a helper process that kills every registered command tree when the harness dies.

Run as `python -I -S reaper.py` with a pipe on stdin. The harness writes `+PID` when it spawns
a command and `-PID` when it has reaped it, `+/PATH` and `-/PATH` for private temp folders.
When stdin ends (the harness exited or was killed, even by SIGKILL), every registered PID is
killed with all its descendants, every registered folder is removed, then the reaper exits.
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
    for line in sys.stdin.buffer:
        text = line.rstrip(b"\n")
        sign, rest = text[:1], text[1:]
        if rest.startswith(b"/"):
            (folders.add if sign == b"+" else folders.discard)(rest)
            continue
        with contextlib.suppress(ValueError):
            if sign == b"+":
                registered.add(int(rest))
            elif sign == b"-":
                registered.discard(int(rest))
    for pid in registered:
        kill_tree(pid)
    if folders:
        import shutil  # only now: start-up stays light

        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

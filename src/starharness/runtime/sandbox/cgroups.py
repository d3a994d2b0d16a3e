"""Process-count cgroups: one per command, holding its whole tree and capping its size.

The kernel's `pids` controller is the one process limit that holds for root (RLIMIT_NPROC does
not apply to root or to CAP_SYS_RESOURCE). It is used where this process may write a pids
cgroup: a delegated cgroup v2 subtree with `pids` available, or the cgroup v1 `pids`
hierarchy (root). Each command gets `<own cgroup>/star-harness-<pid>/cmd-<n>` with `pids.max`
set before it starts; it joins the cgroup before it is exec'd (processes.py), so everything it
forks is inside from birth, and killing what the cgroup lists ends it even after double forks.
Where no such cgroup is writable, `find_pids_root` answers None and the caller falls back to
watching the tree (processes.py).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from .reaper import kill_cgroup, remove_cgroup

_MOUNTINFO = Path("/proc/self/mountinfo")
_OWN_CGROUP = Path("/proc/self/cgroup")


@dataclass(frozen=True, slots=True)
class PidsRoot:
    """This harness process's folder of command cgroups (made on first use)."""

    path: Path
    version: int
    """1 (the v1 `pids` hierarchy) or 2 (the unified hierarchy)."""


def _mounts() -> list[tuple[Path, str, str, str]]:
    """(mount point, root inside the hierarchy, filesystem type, super options) of each mount."""
    found: list[tuple[Path, str, str, str]] = []
    try:
        lines = _MOUNTINFO.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        found.append((Path(_unescape(fields[4])), _unescape(fields[3]), tail[0], tail[2]))
    return found


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    if "\\" not in text:
        return text
    return text.encode().decode("unicode_escape").encode("latin-1").decode(errors="replace")


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: `pids` (v1) and `` (v2, the "0::" line)."""
    found: dict[str, str] = {}
    try:
        lines = _OWN_CGROUP.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(","):
            found[controller] = parts[2]
    return found


def _inside(mount: Path, mount_root: str, own: str) -> Path | None:
    """Where `own` (a path in the hierarchy) is under `mount`, if this mount shows it."""
    relative = os.path.relpath(own, mount_root)
    if relative.startswith(".."):
        return None
    return (mount / relative).resolve() if relative != "." else mount


def _try_root(parent: Path, version: int) -> PidsRoot | None:
    folder = parent / f"star-harness-{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    if version == 2:
        enabled = _read(folder / "cgroup.controllers").split()
        if "pids" not in enabled:
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text("+pids")
            enabled = _read(folder / "cgroup.controllers").split()
        # Our children need pids too: this folder holds no process, so it may enable it.
        with contextlib.suppress(OSError):
            (folder / "cgroup.subtree_control").write_text("+pids")
        if "pids" not in enabled or "pids" not in _read(folder / "cgroup.subtree_control"):
            remove(folder)
            return None
    probe = folder / "probe"
    try:
        probe.mkdir(exist_ok=True)
        (probe / "pids.max").write_text("1")
        writable = os.access(probe / "cgroup.procs", os.W_OK)
    except OSError:
        writable = False
    remove(probe)
    if not writable:
        remove(folder)
        return None
    return PidsRoot(folder, version)


def find_pids_root() -> PidsRoot | None:
    """A writable folder for per-command pids cgroups, or None (blocking: call in a thread)."""
    own = _own_paths()
    mounts = _mounts()
    for mount, mount_root, fstype, _options in mounts:
        if fstype == "cgroup2" and "" in own:
            parent = _inside(mount, mount_root, own[""])
            if parent is not None and (parent / "cgroup.controllers").exists():
                found = _try_root(parent, 2)
                if found is not None:
                    return found
    for mount, mount_root, fstype, options in mounts:
        if fstype == "cgroup" and "pids" in options.split(",") and "pids" in own:
            parent = _inside(mount, mount_root, own["pids"])
            if parent is not None and (parent / "cgroup.procs").exists():
                found = _try_root(parent, 1)
                if found is not None:
                    return found
    return None


_numbers = itertools.count(1)


def create(root: PidsRoot, max_processes: int) -> Path:
    """A new command cgroup under `root` holding at most `max_processes` tasks (OSError)."""
    folder = root.path / f"cmd-{next(_numbers)}"
    folder.mkdir()
    try:
        (folder / "pids.max").write_text(str(max_processes))
    except OSError:
        remove(folder)
        raise
    return folder


def members(folder: Path) -> list[int]:
    return [int(pid) for pid in _read(folder / "cgroup.procs").split()]


def refused(folder: Path) -> int:
    """How many forks the cgroup's limit refused (pids.events "max N")."""
    for line in _read(folder / "pids.events").splitlines():
        name, _, count = line.partition(" ")
        if name == "max" and count.strip().isdigit():
            return int(count)
    return 0


def kill_members(folder: Path) -> bool:
    """SIGKILL every process in the cgroup; True when it listed none (all gone)."""
    return kill_cgroup(str(folder))


def remove(folder: Path) -> bool:
    """rmdir the cgroup (the kernel refuses while a process is in it); True when gone."""
    return remove_cgroup(str(folder))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""

"""bubblewrap (Debian's `bubblewrap`): mount, PID and network namespaces around each command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .policy import SandboxPolicy
from .tiers import Tier

_PROBE_TIMEOUT_S = 10.0


class BubblewrapProvider:
    """Confines with `bwrap`: a read-only / with secrets hidden, no capabilities, no network.

    Every command gets its own PID namespace, whose PID 1 dies with the command's first process
    (so does everything it started, `setsid` children included), a fresh /proc and /dev, a
    private /tmp, a new session (no terminal injection) and no capabilities, even when the
    harness runs as root.
    """

    name = "bubblewrap"

    def __init__(self, executable: str | None = None) -> None:
        self._configured = executable

    def executable(self) -> str | None:
        if self._configured is not None:
            return self._configured if os.access(self._configured, os.X_OK) else None
        return shutil.which("bwrap")

    def probe(self) -> str | None:
        bwrap = self.executable()
        if bwrap is None:
            where = self._configured or "PATH"
            return f"bwrap not found in {where} (install Debian's bubblewrap package)"
        try:
            done = subprocess.run(
                [bwrap, *_BASE, "--ro-bind", "/", "/", "--", "true"],
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"{bwrap} could not run: {error}"
        if done.returncode != 0:
            text = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
            return f"{bwrap} cannot create namespaces here: {text}"
        return None

    def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        bwrap = self.executable()
        if bwrap is None:
            raise RuntimeError("bwrap is no longer installed")
        args = [bwrap, *_BASE]
        if policy.network:
            args.append("--share-net")
        if policy.tier is Tier.FULL:
            args += ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
        else:
            args += _confined_mounts(policy)
        args += ["--chdir", str(policy.start_dir), "--", *argv]
        return args

    def describe(self, policy: SandboxPolicy) -> str:
        if policy.tier is Tier.FULL:
            files = "all files writable"
        elif policy.tier is Tier.WORKSPACE_WRITE:
            files = f"writable: {policy.workspace} and the temp folder; the rest read-only"
        elif policy.readable is not None:
            shown = ", ".join(str(p) for p in policy.readable)
            files = f"reads only {shown} and the temp folder (its one writable folder)"
        else:
            files = "read-only except the temp folder"
        network = "network on" if policy.network else "no network"
        return f"bubblewrap, {policy.tier}: {files}, {network}"


# Every namespace bwrap can make (user and cgroup where possible); the network is added back by
# --share-net only when approved. Capabilities go even for root: with CAP_SYS_ADMIN a command
# could remount / read-write. --die-with-parent chains the lifetimes: the namespace's init (its
# PID 1, whose death makes the kernel kill every process inside) dies with the outer bwrap, which
# exits as soon as the command's first process does, so background and setsid children end with
# the call; the outer bwrap dies with its parent, the holder (processes.py), not the harness, so
# a harness killed while bwrap still sets up leaves a chain the reaper can find and kill.
_BASE = (
    "--unshare-all",
    "--new-session",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
)


def _confined_mounts(policy: SandboxPolicy) -> list[str]:
    if policy.readable is not None:
        return _readable_only_mounts(policy)
    temp = str(policy.temp_dir)
    workspace = str(policy.workspace)
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    mounts += ["--bind", temp, temp]
    bind = "--bind" if policy.tier is Tier.WORKSPACE_WRITE else "--ro-bind"
    mounts += [bind, workspace, workspace]
    for extra in policy.writable_paths():
        mounts += ["--bind", str(extra), str(extra)]
    return mounts + _hiding(policy.hidden_paths())


def _readable_only_mounts(policy: SandboxPolicy) -> list[str]:
    """A root holding only the readable paths (links as links), /dev and the temp folder.

    No /proc: a program could write its own /proc/self/mem and run native code without loading
    any (code mode, whose programs only this root serves, needs none of it).
    """
    # /tmp first: a readable path inside it (an interpreter unpacked there) is mounted over it.
    mounts = ["--dev", "/dev", "--tmpfs", "/proc", "--tmpfs", "/tmp"]
    bound: list[Path] = []
    for path in policy.readable_paths():
        if path.is_symlink():
            mounts += ["--symlink", str(path.readlink()), str(path)]
        else:
            mounts += ["--ro-bind", str(path), str(path)]
            bound.append(Path(os.path.realpath(path)))
    temp = str(policy.temp_dir)
    mounts += ["--bind", temp, temp]
    # A hidden path outside every readable one is not there to hide.
    hidden = [h for h in policy.hidden_paths() if any(h.is_relative_to(b) for b in bound)]
    # bubblewrap's own root is a writable tmpfs: nothing may be made beside what is mounted.
    return [*mounts, *_hiding(hidden), "--remount-ro", "/"]


def _hiding(hidden_paths: Sequence[Path]) -> list[str]:
    mounts: list[str] = []
    for hidden in hidden_paths:
        if hidden.is_dir():
            mounts += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
        else:
            mounts += ["--ro-bind", "/dev/null", str(hidden)]
    return mounts

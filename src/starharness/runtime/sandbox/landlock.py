"""Landlock: the command confines itself (through `landlock_exec.py`) before it is exec'd.

For machines where bubblewrap cannot make namespaces (containers, hardened kernels): no root,
no namespaces, only system calls. Files are allowed by path beneath; TCP by Landlock's network
rules (ABI 4+); every other socket family but AF_UNIX by a seccomp filter.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import landlock_exec
from .policy import SandboxPolicy
from .tiers import Tier

LAUNCHER = Path(landlock_exec.__file__).resolve()
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


class LandlockProvider:
    """Confines with Landlock rules that survive exec; see docs/security.md for its limits."""

    name = "landlock"

    def __init__(self, python: str | None = None) -> None:
        self._python = python or sys.executable

    def probe(self) -> str | None:
        abi = landlock_exec.abi_version()
        kernel = platform.release()
        if abi < 1:
            return f"Landlock is not enabled in kernel {kernel}"
        if platform.machine() not in ("x86_64", "aarch64"):
            return f"no socket filter for {platform.machine()}, so the network cannot be shut"
        if not os.access(self._python, os.X_OK):
            return f"the Python interpreter {self._python} cannot be run"
        return None

    def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        rules = landlock_rules(policy).to_args()
        return [self._python, "-I", "-S", "-B", str(LAUNCHER), *rules, "--", *argv]

    def describe(self, policy: SandboxPolicy) -> str:
        abi = landlock_exec.abi_version()
        network = "network on" if policy.network else "no network"
        return f"landlock (ABI {abi}), {policy.tier}, {network}"


def landlock_rules(policy: SandboxPolicy) -> landlock_exec.Rules:
    """The launcher's rules: readable and writable path lists, network, and whether `full`."""
    if policy.tier is Tier.FULL:
        return landlock_exec.Rules(full=True, network=policy.network)
    # Landlock can only allow: hiding an entry of the project would take away the project
    # folder itself (files made there later could not be read), so such entries stay visible.
    hidden = [p for p in policy.hidden_paths() if not p.is_relative_to(policy.workspace)]
    write = [str(policy.temp_dir), *_DEVICES]
    if policy.readable is not None:
        read: list[str] = []
        for path in policy.readable_paths():
            read += beneath_except(Path(os.path.realpath(path)), hidden)
        return landlock_exec.Rules(read=read, write=write, network=policy.network)
    if policy.tier is Tier.WORKSPACE_WRITE:
        write += beneath_except(policy.workspace, hidden)
        for extra in policy.writable_paths():
            write += beneath_except(extra, hidden)
    return landlock_exec.Rules(
        read=beneath_except(Path("/"), hidden),
        write=write,
        network=policy.network,
        # `ls /` and `ls ~` still work; names below a hidden folder are listable, never read.
        list=[str(path) for path in split_folders(Path("/"), hidden)],
    )


def split_folders(root: Path, hidden: Iterable[Path]) -> list[Path]:
    """The folders `beneath_except` replaces by their entries: `root` and hidden paths' parents."""
    found: set[Path] = set()
    for path in hidden:
        if path != root and path.is_relative_to(root):
            parent = path.parent
            while parent.is_relative_to(root):
                found.add(parent)
                if parent == root:
                    break
                parent = parent.parent
    return sorted(found)


def beneath_except(root: Path, hidden: Iterable[Path]) -> list[str]:
    """Paths whose subtrees together cover `root` except the `hidden` ones.

    Landlock only allows (never denies) beneath a path, so a folder holding a hidden entry is
    replaced by its other entries, recursively.
    """
    inside = [path for path in hidden if path != root and path.is_relative_to(root)]
    if any(path == root for path in hidden):
        return []
    if not inside:
        return [str(root)]
    found: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return []
    for entry in entries:
        found += beneath_except(Path(entry.path), inside)
    return found

"""macOS Seatbelt (`sandbox-exec`): a generated profile, paths passed as parameters.

Paths go in as `-D NAME=VALUE` parameters rather than spliced into the profile text, so no
folder name can change the profile's meaning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .policy import SandboxPolicy
from .tiers import Tier

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_BASE_RULES = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/null") (literal "/dev/tty"))
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))"""


def seatbelt_profile(policy: SandboxPolicy) -> tuple[str, dict[str, str]]:
    """The profile text and its parameters (name -> path) for `policy`."""
    params: dict[str, str] = {}

    def param(prefix: str, index: int, value: str) -> str:
        name = f"{prefix}_{index}"
        params[name] = value
        return f'(param "{name}")'

    lines = [_BASE_RULES]
    if policy.tier is Tier.FULL:
        lines.append("(allow file-read* file-write*)")
    else:
        if policy.readable is None:
            lines.append("(allow file-read*)")
        else:
            # stat() of any path still answers (as under Landlock); contents only from these.
            # Seatbelt matches real paths (/tmp is /private/tmp): links are followed here.
            paths = [os.path.realpath(p) for p in (*policy.readable_paths(), policy.temp_dir)]
            shown = [param("READABLE", i, path) for i, path in enumerate(paths)]
            lines.append("(allow file-read-metadata)")
            lines.append(f"(allow file-read* {' '.join(f'(subpath {n})' for n in shown)})")
        hidden = [param("HIDDEN", i, str(p)) for i, p in enumerate(policy.hidden_paths())]
        if hidden:
            subpaths = " ".join(f"(subpath {name})" for name in hidden)
            lines.append(f"(deny file-read* file-write* {subpaths})")
        writable = [param("WRITABLE", 0, str(policy.temp_dir))]
        if policy.tier is Tier.WORKSPACE_WRITE:
            writable.append(param("WRITABLE", 1, str(policy.workspace)))
            for index, extra in enumerate(policy.writable_paths(), start=2):
                writable.append(param("WRITABLE", index, str(extra)))
        subpaths = " ".join(f"(subpath {name})" for name in writable)
        lines.append(f"(allow file-write* {subpaths})")
    if policy.network:
        lines.append("(allow network*)")
    else:
        # Local (AF_UNIX) sockets only: DNS, TCP and UDP are all outside network*.
        lines.append("(allow network* (local unix) (remote unix))")
    return "\n".join(lines) + "\n", params


class SeatbeltProvider:
    """Confines with `sandbox-exec -p PROFILE` on macOS."""

    name = "seatbelt"

    def __init__(self, executable: str = SANDBOX_EXEC, platform: str | None = None) -> None:
        self._executable = executable
        self._platform = platform or sys.platform

    def probe(self) -> str | None:
        if self._platform != "darwin":
            return f"Seatbelt exists only on macOS (this is {self._platform})"
        if not os.access(self._executable, os.X_OK):
            return f"{self._executable} not found"
        return None

    def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        profile, params = seatbelt_profile(policy)
        args = [self._executable, "-p", profile]
        for name, value in params.items():
            args += ["-D", f"{name}={value}"]
        return [*args, "--", *argv]

    def describe(self, policy: SandboxPolicy) -> str:
        network = "network on" if policy.network else "no network"
        return f"seatbelt, {policy.tier}, {network}"

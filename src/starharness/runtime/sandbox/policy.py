"""What one confined command may touch: tier, project folder, private temp folder, network."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..workspace.hidden import default_hidden
from .tiers import Tier

PASSED_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL")
"""Environment variables a confined command inherits; every other one (API keys!) is dropped."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The rules for one command; providers turn it into a confined argv."""

    tier: Tier
    workspace: Path
    """The project folder (absolute, resolved): readable, and writable from workspace-write."""
    temp_dir: Path
    """A private folder that is always writable (TMPDIR points at it)."""
    network: bool = False
    hidden: tuple[Path, ...] = field(default_factory=default_hidden)
    """Paths no command may read below the full tier; one containing the workspace is kept."""
    writable: tuple[Path, ...] = ()
    """More folders writable from workspace-write on (a tool's caches and settings)."""
    readable: tuple[Path, ...] | None = None
    """None: every file is readable but the hidden ones. Else only these paths and the temp
    folder are (read-only tier only: the project is not readable either)."""

    def __post_init__(self) -> None:
        if self.readable is not None and self.tier is not Tier.READ_ONLY:
            raise ValueError(f"only the read-only tier can limit what is readable, not {self.tier}")

    @property
    def start_dir(self) -> Path:
        """Where a command starts: the project, or its temp folder when the project is unread."""
        return self.workspace if self.readable is None else self.temp_dir

    def readable_paths(self) -> list[Path]:
        """The readable paths that exist, as given (a symbolic link is kept as one)."""
        return [path for path in self.readable or () if os.path.lexists(path)]

    def writable_paths(self) -> list[Path]:
        """The extra writable folders that exist, below workspace-write: none."""
        if self.tier is Tier.READ_ONLY:
            return []
        return [Path(os.path.realpath(p)) for p in self.writable if p.is_dir()]

    def hidden_paths(self) -> list[Path]:
        """Hidden paths that exist, except ones the workspace or temp folder lie inside, and
        ones inside another hidden path (covered by it already)."""
        kept: list[Path] = []
        for path in self.hidden:
            if not os.path.lexists(path):
                continue
            resolved = Path(os.path.realpath(path))
            if _inside(self.workspace, resolved) or _inside(self.temp_dir, resolved):
                continue
            kept.append(resolved)
        # bubblewrap cannot mount over a file inside a folder it already replaced read-only.
        return [p for p in kept if not any(p != q and p.is_relative_to(q) for q in kept)]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def confined_env(
    policy: SandboxPolicy,
    source: Mapping[str, str] | None = None,
    passed: Iterable[str] = (),
) -> dict[str, str]:
    """The environment of a confined command: a short allow-list, and TMPDIR at the temp folder."""
    env = source if source is not None else os.environ
    names = {*PASSED_ENV, *passed}
    result = {name: env[name] for name in names if name in env}
    result.update((name, value) for name, value in env.items() if name.startswith("LC_"))
    result.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    for name in ("TMPDIR", "TMP", "TEMP"):
        result[name] = str(policy.temp_dir)
    return result

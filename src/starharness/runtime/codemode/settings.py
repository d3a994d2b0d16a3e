"""CodeModeSettings: the limits of one program and which host tools it may call."""

from __future__ import annotations

from dataclasses import dataclass

from ..sandbox.tools import COMMAND_TOOLS

RUN_CODE = "run_code"
"""The tool's name."""

NEVER_CALLABLE = frozenset({RUN_CODE, *COMMAND_TOOLS, "job_read", "job_stop", "sandbox_escalate"})
"""Tools no program may call: itself (no nesting), and the shell, job and tier tools (a program
must not start processes outside its own confinement or widen the sandbox)."""


@dataclass(frozen=True, slots=True)
class CodeModeSettings:
    """The plugin's config as plain values (see CodeModeConfig for what each one means)."""

    python: str
    cpu_s: int = 10
    wall_s: float = 30.0
    memory_mb: int = 512
    file_mb: int = 16
    open_files: int = 64
    processes: int = 64
    output_bytes: int = 30_000
    max_calls: int = 1000
    max_program_chars: int = 50_000
    line_bytes: int = 1024 * 1024
    listed_calls: int = 200
    tool_timeout_s: float = 600.0
    exclude: frozenset[str] = frozenset()
    allow: frozenset[str] | None = None

    def guest_limits(self) -> dict[str, int]:
        """The limits the runner sets on itself (setrlimit) before the program runs."""
        return {
            "cpu_s": self.cpu_s,
            "memory_mb": self.memory_mb,
            "file_mb": self.file_mb,
            "open_files": self.open_files,
            "processes": self.processes,
        }

    def callable_tools(self, visible: list[str]) -> list[str]:
        """The visible tools a program may call: minus the never-callable and excluded ones."""
        names = [n for n in visible if n not in NEVER_CALLABLE and n not in self.exclude]
        if self.allow is not None:
            names = [n for n in names if n in self.allow]
        return names

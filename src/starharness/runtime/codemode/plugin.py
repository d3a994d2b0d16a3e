"""CodeModePlugin: registers run_code, whose programs run in the SANDBOX and call TOOLS."""

from __future__ import annotations

import asyncio
import os
import sys

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..sandbox import SANDBOX
from ..tools import TOOLS
from .settings import CodeModeSettings
from .tool import run_code_tool


class CodeModeConfig(BaseModel):
    """The limits of one program, which host tools it may call, and where run_code is."""

    model_config = ConfigDict(extra="forbid")

    every_agent: bool = True
    """Register run_code for every agent; false: register `run_code_tool(...)` per agent."""
    cpu_s: int = Field(default=10, ge=1, le=600)
    wall_s: float = Field(default=30.0, gt=0, le=3600)
    """The program's own wall time; host tool calls (and approvals) do not count."""
    memory_mb: int = Field(default=512, ge=64)
    """Address space of the program's process (RLIMIT_AS)."""
    file_mb: int = Field(default=16, ge=1)
    """Largest file it may write (only its private temp folder is writable)."""
    open_files: int = Field(default=64, ge=16)
    processes: int = Field(default=64, ge=1)
    """RLIMIT_NPROC (threads count; the kernel does not apply it to root)."""
    output_bytes: int = Field(default=30_000, ge=256)
    max_calls: int = Field(default=1000, ge=1)
    max_program_chars: int = Field(default=50_000, ge=100)
    listed_calls: int = Field(default=200, ge=0)
    """At most this many calls are listed in the result (the rest are counted)."""
    tool_timeout_s: float = Field(default=600.0, gt=0)
    """The whole run_code call, host calls included."""
    exclude: list[str] = []
    """More tools a program may not call (run_code, shell and the job tools never are)."""
    allow: list[str] | None = None
    """Only these tools (null: every tool the agent has, minus the excluded)."""
    python: str | None = None
    """The interpreter for programs; null: the one running the harness."""

    def settings(self, python: str) -> CodeModeSettings:
        return CodeModeSettings(
            python=python,
            cpu_s=self.cpu_s,
            wall_s=self.wall_s,
            memory_mb=self.memory_mb,
            file_mb=self.file_mb,
            open_files=self.open_files,
            processes=self.processes,
            output_bytes=self.output_bytes,
            max_calls=self.max_calls,
            max_program_chars=self.max_program_chars,
            listed_calls=self.listed_calls,
            tool_timeout_s=self.tool_timeout_s,
            exclude=frozenset(self.exclude),
            allow=None if self.allow is None else frozenset(self.allow),
        )


def interpreter(configured: str | None = None) -> str:
    """The real interpreter file: a venv's link may sit under /tmp, which the sandbox replaces."""
    return os.path.realpath(configured or sys.executable)


class CodeModePlugin(Plugin[CodeModeConfig]):
    """Registers run_code (unless `register: false`); needs the sandbox and tools rows."""

    Config = CodeModeConfig
    inject = (TOOLS, SANDBOX)

    async def setup(self, ctx: Context, config: CodeModeConfig) -> None:
        python = await asyncio.to_thread(interpreter, config.python)
        if config.every_agent:
            ctx.get(TOOLS).register(run_code_tool(config.settings(python)))

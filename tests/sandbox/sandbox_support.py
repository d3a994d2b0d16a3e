"""Shared pieces of the sandbox tests: a runtime with tools, approvals and one provider."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from starharness.runtime.approvals import (
    APPROVAL_ASKED,
    APPROVAL_DECIDED,
    APPROVALS,
    ApprovalDecided,
    ApprovalRequest,
    ApprovalsConfig,
    ApprovalsPlugin,
    Decision,
    InteractiveApprovals,
)
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.sandbox import (
    BubblewrapProvider,
    LandlockProvider,
    SandboxConfig,
    SandboxPlugin,
)
from starharness.runtime.tools import TOOLS, ToolOutcome, ToolsConfig, ToolsPlugin

BWRAP_MISSING = BubblewrapProvider().probe()
LANDLOCK_MISSING = LandlockProvider().probe()

needs_bwrap = pytest.mark.skipif(
    BWRAP_MISSING is not None and os.environ.get("CI") != "true",
    reason=f"bubblewrap does not work here: {BWRAP_MISSING}",
)
needs_landlock = pytest.mark.skipif(
    LANDLOCK_MISSING is not None,
    reason=f"Landlock is not usable on kernel {platform.release()}: {LANDLOCK_MISSING}",
)

PROVIDERS = [
    pytest.param("bubblewrap", marks=needs_bwrap, id="bubblewrap"),
    pytest.param("landlock", marks=needs_landlock, id="landlock"),
]


@dataclass
class Machine:
    """A fake user on a real disk: home with secrets, harness home, project, and outside."""

    root: Path
    home: Path = field(init=False)
    harness_home: Path = field(init=False)
    project: Path = field(init=False)
    outside: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.harness_home = self.home / ".star-harness"
        self.project = self.root / "project"
        self.outside = self.root / "outside"
        for folder in (self.home / ".ssh", self.harness_home, self.project, self.outside):
            folder.mkdir(parents=True)
        (self.home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
        credentials = self.harness_home / "credentials.env"
        credentials.write_text("DEEPSEEK_API_KEY=sk-secret\n")
        credentials.chmod(0o600)
        (self.outside / "keep.txt").write_text("untouched\n")


@contextlib.contextmanager
def machine_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    # Not under /tmp: bubblewrap gives commands a private /tmp, which would hide the very files
    # the escape attempts aim at and make the tests pass for the wrong reason.
    base = Path(tempfile.mkdtemp(prefix="star-harness-sandbox-test-", dir=_disk_temp()))
    found = Machine(base)
    monkeypatch.setenv("HOME", str(found.home))
    monkeypatch.setenv("STAR_HARNESS_HOME", str(found.harness_home))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-the-environment")
    try:
        yield found
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _disk_temp() -> str:
    return "/var/tmp" if os.access("/var/tmp", os.W_OK) else tempfile.gettempdir()


@dataclass
class Rig:
    """A runtime root and one agent layer, with what the approval service was asked."""

    root: Context
    agent: Context
    asked: list[ApprovalRequest]
    decided: list[ApprovalDecided]
    answers: list[Decision]
    calls: int = 0

    async def call(self, name: str, session_id: str = "s-1", **arguments: Any) -> ToolOutcome:
        self.calls += 1
        call = ToolCall(f"c{self.calls}", name, json.dumps(arguments))
        [outcome] = await self.agent.get(TOOLS).execute_calls([call], session_id=session_id)
        return outcome

    async def shell(self, command: str, **arguments: Any) -> ToolOutcome:
        return await self.call("shell", command=command, **arguments)


async def make_rig(
    project: Path,
    *,
    providers: Sequence[str] = ("bubblewrap",),
    policy: str = "ask",
    answers: Sequence[Decision] = (),
    **sandbox: Any,
) -> Rig:
    """Tools, approvals (`ask` answered from `answers`, else allowed) and the sandbox."""
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig())
    approvals = ApprovalsConfig.model_validate({"policy": policy})
    await ApprovalsPlugin().setup(root.fork("approvals"), approvals)
    config = SandboxConfig.model_validate(
        {"providers": list(providers), "root": str(project), "guidance": False, **sandbox}
    )
    await SandboxPlugin().setup(root.fork("sandbox"), config)
    agent = root.child("agent")
    rig = Rig(root, agent, [], [], list(answers))
    agent.on(APPROVAL_ASKED, rig.asked.append)
    agent.on(APPROVAL_DECIDED, rig.decided.append)
    service = root.get(APPROVALS)
    if isinstance(service, InteractiveApprovals):

        async def ask(request: ApprovalRequest) -> Decision:
            return rig.answers.pop(0) if rig.answers else Decision.ALLOWED_ONCE

        service.attach(ask)
    return rig


def processes_with(marker: str) -> list[int]:
    """PIDs whose command line contains `marker` (sandboxed ones included: /proc sees all)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def zombie_children() -> list[int]:
    """Children of this process that ended and were never reaped."""
    zombies: list[int] = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ..."; comm may contain spaces, so split after the last ")".
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state == "Z" and int(ppid) == me:
            zombies.append(int(entry.name))
    return zombies

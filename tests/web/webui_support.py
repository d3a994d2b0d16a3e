"""A running `star-harness web` in-process: a profile at the mock LLM, the UI on a free port."""

from __future__ import annotations

import importlib
import json
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from starharness.cli._command_profile import load_for_command
from starharness.npc import ServerSettings, TranscriptSettings
from starharness.runtime.config import Runtime, start
from starharness.runtime.protocol import HostInfo
from starharness.runtime.session import SessionsConfig
from starharness.webui import RunningWeb, WebSettings, start_web


@dataclass
class WebStack:
    runtime: Runtime
    web: RunningWeb

    @property
    def url(self) -> str:
        return self.web.url


@asynccontextmanager
async def web_stack(
    profile: str,
    rows: Sequence[dict[str, Any]],
    folder: Path,
    *,
    project: Path | None = None,
    settings: WebSettings | None = None,
) -> AsyncIterator[WebStack]:
    """`star-harness web --profile PROFILE --patch ROWS`, as the command builds it."""
    patch = folder / "web.patch.yml"
    patch.write_text(json.dumps(list(rows)), encoding="utf-8")
    resolved = load_for_command("web", profile, [patch], project=project, interactive=True)
    async with await start(resolved) as runtime:
        info = HostInfo(profile=resolved.name, version="test", session_prefix="web")
        web = await start_web(runtime.ctx, info, settings or WebSettings(port=0))
        try:
            yield WebStack(runtime, web)
        finally:
            await web.stop()


def _npc_helpers() -> tuple[ModuleType, ModuleType, ModuleType]:
    """tests/npc's serving stack and tiny game (a real NPC server writes the transcript)."""
    folder = str(Path(__file__).resolve().parents[1] / "npc")
    if folder not in sys.path:
        sys.path.append(folder)
    support = importlib.import_module("npc_support")
    return support, importlib.import_module("tinygame"), importlib.import_module("tinygame.brain")


async def record_encounter(home: Path, tmp_path: Path) -> None:
    """One NPC encounter (three model requests) stored in `home`'s session store."""
    support, tinygame, brain = _npc_helpers()
    settings = ServerSettings(port=0, transcripts=TranscriptSettings(keep=None))
    sessions = SessionsConfig(store="sqlite", path=home / "sessions.db", max_write_delay_ms=0)
    async with (
        support.serving(
            tinygame.GAME, tmp_path, settings, responder=brain.respond, sessions=sessions
        ) as stack,
        stack.client() as client,
    ):
        await client.open("e1", "n-baker", "p1")
        await client.say("e1", "Hello there")
        await client.say("e1", "buy 1")
        await client.send({"t": "encounter.close", "id": "e1"})
        await client.send({"t": "hello", "playerId": "p1"})
        await client.until(lambda frame: frame["t"] == "welcome")


def free_port() -> int:
    """A loopback port that was free a moment ago (for a server started as a process)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

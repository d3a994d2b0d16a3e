"""A running `star-harness web` in-process: a profile at the mock LLM, the UI on a free port."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starharness.cli._command_profile import load_for_command
from starharness.runtime.config import Runtime, start
from starharness.runtime.protocol import HostInfo
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

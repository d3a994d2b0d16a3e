"""AgentsMdPlugin: the workspace's AGENTS.md files (the root one and nested ones, each for its
own folder) as a system-prompt section, within a byte budget."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..prompt import PERSONA_ORDER, PROMPT
from ..workspace.limits import DEFAULT_IGNORED_DIRS

SECTION = "context.agents-md"


class AgentsMdConfig(BaseModel):
    """Where to look and how much to include."""

    model_config = ConfigDict(extra="forbid")

    root: str | None = None
    """The folder to read; null: the workspace row's project folder, else the current one."""
    file_name: str = "AGENTS.md"
    max_bytes: int = Field(default=32_768, ge=256)
    """All files together; the root file comes first, then nested ones by path."""
    max_depth: int = Field(default=4, ge=0)
    ignored_dirs: list[str] = list(DEFAULT_IGNORED_DIRS)
    order: float = PERSONA_ORDER + 50


@dataclass(frozen=True, slots=True)
class Found:
    relative: str
    text: str


def find_instructions(root: Path, config: AgentsMdConfig) -> list[Found]:
    """Every instructions file under `root` (blocking: run it in a thread)."""
    found: list[Found] = []
    ignored = set(config.ignored_dirs)
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if d not in ignored and depth < config.max_depth)
        if config.file_name in files:
            path = here / config.file_name
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found.append(Found(path.relative_to(root).as_posix(), text))
    found.sort(key=lambda f: (f.relative.count("/"), f.relative))
    return found


def render_instructions(found: list[Found], max_bytes: int) -> str | None:
    """The section text, cut to `max_bytes` (UTF-8); files that do not fit are named."""
    if not found:
        return None
    lines = [
        "Workspace instructions from AGENTS.md files. A nested file applies to the files in"
        " its folder and below, and wins over a wider one where they disagree."
    ]
    budget = max_bytes
    left_out: list[str] = []
    for item in found:
        if budget <= 0:
            left_out.append(item.relative)
            continue
        body = item.text.strip()
        data = body.encode()
        if len(data) > budget:
            body = data[:budget].decode(errors="ignore") + (
                f"\n[... {len(data) - budget} more bytes of {item.relative} over the budget]"
            )
        budget -= len(data)
        lines.append(f"\n## {item.relative}\n{body}")
    if left_out:
        lines.append(f"\n(Not included, over the budget: {', '.join(left_out)}.)")
    return "\n".join(lines)


class AgentsMdPlugin(Plugin[AgentsMdConfig]):
    """Reads the instructions once at start; they are part of the static system prompt."""

    needs_agent_loop = True

    Config = AgentsMdConfig
    inject = (PROMPT,)

    async def setup(self, ctx: Context, config: AgentsMdConfig) -> None:
        root = Path(config.root) if config.root is not None else _workspace_root(ctx)
        found = await asyncio.to_thread(find_instructions, root, config)
        text = render_instructions(found, config.max_bytes)
        if text is not None:
            ctx.get(PROMPT).section(SECTION, config.order, lambda _ctx: text)


def _workspace_root(ctx: Context) -> Path:
    from ..workspace import WORKSPACE

    workspace = ctx.maybe(WORKSPACE)
    return Path(workspace.root) if workspace is not None else Path.cwd()

"""WorkspacePlugin: file tools confined to one project folder, and the WORKSPACE service."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin, ServiceKey
from ..prompt import PROMPT, TOOL_GUIDANCE_ORDER
from ..tools import TOOLS
from .limits import DEFAULT_IGNORED_DIRS, Limits
from .root import Workspace
from .tools import workspace_tools

WORKSPACE: ServiceKey[Workspace] = ServiceKey(
    "workspace", "add a row with plugin starharness.runtime.workspace:WorkspacePlugin"
)

GUIDANCE_SECTION = "workspace.guidance"


class WorkspaceConfig(BaseModel):
    """Where the project folder is and how much one file call may read, list or write."""

    model_config = ConfigDict(extra="forbid")

    root: str | None = None
    """The project folder; null means the current directory (commands set it with --project)."""
    writable: bool = True
    """Register write_file (tagged requires-approval, so the approval policy sees it)."""
    guidance: bool = True
    """Tell the model in the system prompt where the project folder is."""
    max_read_bytes: int = Field(default=256 * 1024, ge=1)
    max_write_bytes: int = Field(default=1024 * 1024, ge=1)
    max_list_entries: int = Field(default=5_000, ge=1)
    max_search_results: int = Field(default=1_000, ge=1)
    max_search_file_bytes: int = Field(default=1024 * 1024, ge=1)
    max_search_files: int = Field(default=20_000, ge=1)
    ignored_dirs: list[str] = list(DEFAULT_IGNORED_DIRS)
    """Folder names that listing and searching do not walk into."""

    def limits(self) -> Limits:
        return Limits(
            max_read_bytes=self.max_read_bytes,
            max_write_bytes=self.max_write_bytes,
            max_list_entries=self.max_list_entries,
            max_search_results=self.max_search_results,
            max_search_file_bytes=self.max_search_file_bytes,
            max_search_files=self.max_search_files,
            ignored_dirs=frozenset(self.ignored_dirs),
        )


class WorkspacePlugin(Plugin[WorkspaceConfig]):
    """Provides WORKSPACE and registers read_file, list_files, search_files and write_file."""

    Config = WorkspaceConfig
    inject = (TOOLS,)
    provides = (WORKSPACE,)

    async def setup(self, ctx: Context, config: WorkspaceConfig) -> None:
        root = config.root if config.root is not None else Path.cwd()
        workspace = await asyncio.to_thread(Workspace.open, root)
        ctx.provide(WORKSPACE, workspace)
        for definition in workspace_tools(workspace, config.limits(), writable=config.writable):
            ctx.get(TOOLS).register(definition)
        prompt = ctx.maybe(PROMPT)
        if config.guidance and prompt is not None:
            # A callable, so a folder name containing braces is never read as a template.
            text = (
                f"The file tools work inside the project folder {workspace.root}; give paths "
                "relative to it. Paths that leave it (.., links pointing out) are refused."
            )
            prompt.section(GUIDANCE_SECTION, TOOL_GUIDANCE_ORDER + 10, lambda _ctx: text)

"""runtime/workspace: file tools (read, list, search, write) confined to one project folder."""

from .limits import DEFAULT_IGNORED_DIRS, Limits
from .plugin import GUIDANCE_SECTION, WORKSPACE, WorkspaceConfig, WorkspacePlugin
from .root import Workspace, WorkspaceError
from .tools import (
    WORKSPACE_ERROR,
    ListFilesParams,
    ReadFileParams,
    SearchFilesParams,
    WriteFileParams,
    workspace_tools,
)

__all__ = [
    "DEFAULT_IGNORED_DIRS",
    "GUIDANCE_SECTION",
    "WORKSPACE",
    "WORKSPACE_ERROR",
    "Limits",
    "ListFilesParams",
    "ReadFileParams",
    "SearchFilesParams",
    "Workspace",
    "WorkspaceConfig",
    "WorkspaceError",
    "WorkspacePlugin",
    "WriteFileParams",
    "workspace_tools",
]

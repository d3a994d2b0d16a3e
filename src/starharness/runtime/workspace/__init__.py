"""runtime/workspace: file tools (read, list, search, write) confined to one project folder."""

from .limits import (
    Limits,
)
from .plugin import (
    WORKSPACE,
    WorkspaceConfig,
    WorkspacePlugin,
)
from .root import Workspace, WorkspaceError
from .tools import (
    WORKSPACE_ERROR,
    ListFilesParams,
    ReadFileParams,
    SearchFilesParams,
    WriteFileParams,
)

__all__ = [
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
]

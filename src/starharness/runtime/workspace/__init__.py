"""runtime/workspace: file tools (read, list, search, write, edit) confined to one project
folder."""

from .hidden import SECRET_HOME_ENTRIES, SECRET_NAMES, HiddenList, is_secret_name, secret_files
from .limits import (
    Limits,
)
from .plugin import (
    WORKSPACE,
    WorkspaceConfig,
    WorkspacePlugin,
)
from .root import HiddenPathError, Workspace, WorkspaceError
from .tools import (
    WORKSPACE_ERROR,
    EditFileParams,
    ListFilesParams,
    ReadFileParams,
    SearchFilesParams,
    WriteFileParams,
)

__all__ = [
    "SECRET_HOME_ENTRIES",
    "SECRET_NAMES",
    "WORKSPACE",
    "WORKSPACE_ERROR",
    "EditFileParams",
    "HiddenList",
    "HiddenPathError",
    "Limits",
    "ListFilesParams",
    "ReadFileParams",
    "SearchFilesParams",
    "Workspace",
    "WorkspaceConfig",
    "WorkspaceError",
    "WorkspacePlugin",
    "WriteFileParams",
    "is_secret_name",
    "secret_files",
]

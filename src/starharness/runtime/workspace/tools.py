"""The file tools as ToolDefinitions: read_file, list_files, search_files, write_file and
edit_file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..tools import MUTATING, REQUIRES_APPROVAL, ToolDefinition, ToolFailure, define_tool
from ..tools.run import ToolRunContext
from .limits import Limits
from .reading import list_entries, read_text
from .root import Workspace, WorkspaceError
from .searching import search
from .writing import edit_text, write_text

T = TypeVar("T")

WORKSPACE_ERROR = "workspace_error"
"""Failure code of a refused or impossible file operation."""

PathText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="Path relative to the project folder (or absolute, inside it).",
    ),
]
FolderText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="Folder relative to the project folder; '.' is the project folder itself.",
    ),
]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadFileParams(_Params):
    path: PathText
    offset: int = Field(default=1, ge=1, description="First line to show (1-based).")
    limit: int = Field(default=2000, ge=1, le=100_000, description="At most this many lines.")


class ListFilesParams(_Params):
    path: FolderText = "."
    recursive: bool = Field(default=False, description="List the whole tree below the folder.")
    pattern: str | None = Field(
        default=None,
        max_length=256,
        description="Glob on the name (e.g. '*.txt'), or on the relative path if it has a '/'.",
    )
    limit: int = Field(default=500, ge=1, le=5000, description="At most this many entries.")


class SearchFilesParams(_Params):
    query: str = Field(min_length=1, max_length=1000, description="Text (or regex) to find.")
    path: FolderText = "."
    regex: bool = Field(default=False, description="Treat query as a Python regular expression.")
    ignore_case: bool = False
    glob: str | None = Field(
        default=None, max_length=256, description="Only files whose name matches this glob."
    )
    max_results: int = Field(default=100, ge=1, le=1000, description="Stop after this many.")


class WriteFileParams(_Params):
    path: PathText
    content: str = Field(description="The whole new content of the file (UTF-8 text).")
    create_dirs: bool = Field(default=True, description="Create missing parent folders.")


class EditFileParams(_Params):
    path: PathText
    old_text: str = Field(
        min_length=1,
        description="Text to replace, copied exactly from the file (whitespace included); "
        "it must occur once unless replace_all is true.",
    )
    new_text: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


async def _in_thread(work: Callable[[], T]) -> T | ToolFailure:
    """Run blocking file work off the event loop; a refusal becomes a plain failure."""
    try:
        return await asyncio.to_thread(work)
    except WorkspaceError as exc:
        return ToolFailure(str(exc), WORKSPACE_ERROR)


def workspace_tools(
    workspace: Workspace, limits: Limits, *, writable: bool = True
) -> list[ToolDefinition[Any]]:
    """The file tools bound to `workspace` (write_file and edit_file only when `writable`)."""

    async def read_file(args: ReadFileParams, run: ToolRunContext) -> str | ToolFailure:
        return await _in_thread(
            lambda: read_text(workspace, args.path, args.offset, args.limit, limits)
        )

    async def list_files(args: ListFilesParams, run: ToolRunContext) -> Any:
        return await _in_thread(
            lambda: list_entries(
                workspace,
                args.path,
                recursive=args.recursive,
                pattern=args.pattern,
                limit=args.limit,
                limits=limits,
            )
        )

    async def search_files(args: SearchFilesParams, run: ToolRunContext) -> Any:
        return await _in_thread(
            lambda: search(
                workspace,
                args.query,
                path=args.path,
                regex=args.regex,
                ignore_case=args.ignore_case,
                glob=args.glob,
                max_results=args.max_results,
                limits=limits,
            )
        )

    async def write_file(args: WriteFileParams, run: ToolRunContext) -> Any:
        return await _in_thread(
            lambda: write_text(
                workspace, args.path, args.content, create_dirs=args.create_dirs, limits=limits
            )
        )

    async def edit_file(args: EditFileParams, run: ToolRunContext) -> Any:
        return await _in_thread(
            lambda: edit_text(
                workspace,
                args.path,
                args.old_text,
                args.new_text,
                replace_all=args.replace_all,
                limits=limits,
            )
        )

    tools: list[ToolDefinition[Any]] = [
        define_tool(
            "read_file",
            "Read a text file of the project, optionally a range of lines "
            f"(at most {limits.max_read_bytes} bytes per call).",
            ReadFileParams,
            read_file,
            concurrency_safe=True,
        ),
        define_tool(
            "list_files",
            "List the files and folders of a project folder, optionally recursively and "
            "filtered by a glob.",
            ListFilesParams,
            list_files,
            concurrency_safe=True,
        ),
        define_tool(
            "search_files",
            "Find lines containing a text or matching a regular expression in the project's "
            "text files; returns path, line number and line.",
            SearchFilesParams,
            search_files,
            concurrency_safe=True,
        ),
    ]
    if writable:
        tools.append(
            define_tool(
                "write_file",
                "Create or replace a text file of the project with the given content "
                f"(at most {limits.max_write_bytes} bytes); missing folders are created.",
                WriteFileParams,
                write_file,
                tags=(MUTATING, REQUIRES_APPROVAL),
            )
        )
        tools.append(
            define_tool(
                "edit_file",
                "Replace one exact piece of text in a project file with another (the text "
                "must occur once, or pass replace_all); cheaper and safer than rewriting the "
                "whole file with write_file.",
                EditFileParams,
                edit_file,
                tags=(MUTATING, REQUIRES_APPROVAL),
            )
        )
    return tools

"""Reading files and listing folders inside a workspace (blocking: run in a thread)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .limits import Limits
from .root import Workspace, WorkspaceError

BINARY_PROBE_BYTES = 8192


def looks_binary(head: bytes) -> bool:
    """Text files do not contain NUL bytes; nearly every binary format does early on."""
    return b"\x00" in head


def existing_file(workspace: Workspace, path: str) -> Path:
    """The resolved path of an existing regular file inside the workspace."""
    target = workspace.resolve(path)
    if target.is_dir():
        raise WorkspaceError(f"{path!r} is a folder; use list_files to see what it holds")
    if not target.exists():
        raise WorkspaceError(f"{path!r} does not exist in the project folder")
    if not target.is_file():
        raise WorkspaceError(f"{path!r} is not a regular file")
    return target


def read_text(workspace: Workspace, path: str, offset: int, limit: int, limits: Limits) -> str:
    """Lines `offset`.. (1-based) of a text file, at most `limit` lines and the byte budget."""
    target = existing_file(workspace, path)
    budget = limits.max_read_bytes
    shown: list[str] = []
    used = 0
    last = offset - 1
    seen = 0
    more = False
    try:
        with target.open("rb") as handle:
            if looks_binary(handle.read(BINARY_PROBE_BYTES)):
                raise WorkspaceError(
                    f"{path!r} looks like a binary file (it contains NUL bytes); "
                    "read_file reads text only"
                )
            handle.seek(0)
            for number, raw in enumerate(handle, start=1):
                seen = number
                if number < offset:
                    continue
                if len(shown) >= limit or used + len(raw) > budget:
                    if not shown:
                        # A single line longer than the budget: show its start.
                        shown.append(raw[:budget].decode("utf-8", errors="replace"))
                        last = number
                    more = True
                    break
                shown.append(raw.decode("utf-8", errors="replace"))
                used += len(raw)
                last = number
    except OSError as exc:
        raise WorkspaceError(f"cannot read {path!r}: {exc.strerror or exc}") from exc
    text = "".join(shown)
    if more:
        if text and not text.endswith("\n"):
            text += "\n"
        text += (
            f"[truncated: lines {offset}-{last} shown; call read_file with offset={last + 1} "
            "to read on]"
        )
    elif not shown and offset > 1:
        text = f"[no lines: the file has {seen} lines, fewer than offset={offset}]"
    return text


def _entry(workspace: Workspace, path: Path) -> dict[str, Any]:
    shown = workspace.display(path)
    if workspace.hides(path):
        # Named (a command's `ls` shows it too) so the model knows why it cannot read it.
        return {"path": shown, "type": "hidden"}
    if path.is_symlink():
        return {"path": shown, "type": "symlink"}
    if path.is_dir():
        return {"path": shown, "type": "folder"}
    try:
        size = path.stat().st_size
    except OSError:
        size = None
    return {"path": shown, "type": "file", "size": size}


def _matches(pattern: str | None, workspace: Workspace, path: Path) -> bool:
    if pattern is None:
        return True
    # A pattern with a slash is matched against the whole relative path, else against the name.
    subject = workspace.display(path) if "/" in pattern else path.name
    return fnmatch.fnmatch(subject, pattern)


def walk(workspace: Workspace, folder: Path, limits: Limits) -> Iterator[tuple[Path, bool]]:
    """(path, is_folder) below `folder`, sorted, never following folder symlinks nor entering
    a hidden folder (which is yielded itself, for a listing to name)."""
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if name not in limits.ignored_dirs)
        base = Path(current)
        for name in dirs:
            yield base / name, True
        dirs[:] = [name for name in dirs if not workspace.hides(base / name)]
        for name in sorted(files):
            yield base / name, False


def list_entries(
    workspace: Workspace,
    path: str,
    *,
    recursive: bool,
    pattern: str | None,
    limit: int,
    limits: Limits,
) -> dict[str, Any]:
    """Entries of a folder (or of its whole tree), filtered by a glob, at most `limit`."""
    folder = workspace.resolve(path)
    if not folder.exists():
        raise WorkspaceError(f"{path!r} does not exist in the project folder")
    if not folder.is_dir():
        raise WorkspaceError(f"{path!r} is a file, not a folder; use read_file to read it")
    cap = min(limit, limits.max_list_entries)
    entries: list[dict[str, Any]] = []
    truncated = False
    try:
        if recursive:
            candidates: Iterator[Path] = (found for found, _ in walk(workspace, folder, limits))
        else:
            candidates = iter(sorted(folder.iterdir(), key=lambda p: p.name))
        for candidate in candidates:
            if not _matches(pattern, workspace, candidate):
                continue
            if len(entries) >= cap:
                truncated = True
                break
            entries.append(_entry(workspace, candidate))
    except OSError as exc:
        raise WorkspaceError(f"cannot list {path!r}: {exc.strerror or exc}") from exc
    return {
        "folder": workspace.display(folder),
        "entries": entries,
        "count": len(entries),
        "truncated": truncated,
    }

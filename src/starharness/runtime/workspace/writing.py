"""Writing files inside a workspace (blocking: run in a thread)."""

from __future__ import annotations

import secrets
import stat
from typing import Any

from .limits import Limits
from .reading import existing_file
from .root import Workspace, WorkspaceError


def write_text(
    workspace: Workspace, path: str, content: str, *, create_dirs: bool, limits: Limits
) -> dict[str, Any]:
    """Replace (or create) a text file atomically; its folder is created when `create_dirs`."""
    data = content.encode("utf-8")
    if len(data) > limits.max_write_bytes:
        raise WorkspaceError(
            f"the content is {len(data)} bytes, over the {limits.max_write_bytes}-byte write "
            "limit; split it into smaller files"
        )
    target = workspace.resolve(path)
    if target == workspace.root or target.is_dir():
        raise WorkspaceError(f"{path!r} is a folder; give a file path")
    folder = target.parent
    existed = target.exists()
    try:
        if not folder.is_dir():
            if not create_dirs:
                shown = workspace.display(folder)
                raise WorkspaceError(
                    f"the folder {shown!r} does not exist; pass create_dirs=true to create it"
                )
            folder.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(target.stat().st_mode) if existed else None
        # Write a sibling and rename it over the target, so a reader never sees half a file.
        temporary = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            with temporary.open("xb") as handle:
                handle.write(data)
            if mode is not None:
                temporary.chmod(mode)
            temporary.replace(target)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {path!r}: {exc.strerror or exc}") from exc
    return {"path": workspace.display(target), "bytes": len(data), "created": not existed}


def edit_text(
    workspace: Workspace,
    path: str,
    old_text: str,
    new_text: str,
    *,
    replace_all: bool,
    limits: Limits,
) -> dict[str, Any]:
    """Replace `old_text` by `new_text` in an existing text file: exactly one occurrence unless
    `replace_all`, so an edit never lands somewhere the model did not mean."""
    target = existing_file(workspace, path)
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise WorkspaceError(f"cannot read {path!r}: {exc.strerror or exc}") from exc
    if len(raw) > limits.max_write_bytes:
        raise WorkspaceError(
            f"{path!r} is {len(raw)} bytes, over the {limits.max_write_bytes}-byte write limit"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{path!r} is not UTF-8 text; edit_file edits text only") from exc
    count = text.count(old_text)
    if count == 0:
        raise WorkspaceError(
            f"old_text was not found in {path!r}; read the file and copy the text exactly "
            "(whitespace and indentation included)"
        )
    if count > 1 and not replace_all:
        raise WorkspaceError(
            f"old_text occurs {count} times in {path!r}; include more surrounding lines so it "
            "occurs once, or pass replace_all=true"
        )
    written = write_text(
        workspace, path, text.replace(old_text, new_text), create_dirs=False, limits=limits
    )
    return {"path": written["path"], "replacements": count, "bytes": written["bytes"]}

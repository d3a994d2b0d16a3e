"""Writing files inside a workspace (blocking: run in a thread)."""

from __future__ import annotations

import secrets
import stat
from typing import Any

from .limits import Limits
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

"""The project root: every path a file tool touches is resolved and must stay inside it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import StarHarnessError


class WorkspaceError(StarHarnessError, ValueError):
    """A file tool was asked for something it must not or cannot do; the message says which."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A folder the file tools are confined to. Methods touch the disk: call them in a thread."""

    root: Path
    """Absolute, with symlinks resolved."""

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Workspace:
        """The workspace at `root`; refuse a root that does not exist or is not a folder."""
        given = Path(root).expanduser()
        resolved = given.resolve()
        if not resolved.exists():
            raise WorkspaceError(f"the project folder {given} does not exist")
        if not resolved.is_dir():
            raise WorkspaceError(f"the project folder {given} is not a folder")
        return cls(resolved)

    def resolve(self, path: str) -> Path:
        """`path` (relative to the root, or absolute) with symlinks followed, if inside the root.

        Symlinks are resolved before the check, so a link pointing out of the root is refused
        like `..` is. The check compares whole path components: a sibling folder whose name
        merely starts with the root's name is outside.
        """
        if "\x00" in path:
            raise WorkspaceError("the path contains a NUL character")
        text = path.strip() or "."
        resolved = (self.root / Path(text).expanduser()).resolve()
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{path!r} is outside the project folder {self.root}; "
                "give a path inside it (relative paths start at the project folder)"
            )
        return resolved

    def display(self, path: Path) -> str:
        """How a path inside the root is shown to the model: relative, with forward slashes."""
        if path == self.root:
            return "."
        return path.relative_to(self.root).as_posix()

"""The project root: every path a file tool touches is resolved and must stay inside it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import StarHarnessError
from .hidden import HiddenList, is_secret_name


class WorkspaceError(StarHarnessError, ValueError):
    """A file tool was asked for something it must not or cannot do; the message says which."""


class HiddenPathError(WorkspaceError):
    """A file tool was asked for a hidden path; the message says why, never what it holds."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A folder the file tools are confined to. Methods touch the disk: call them in a thread."""

    root: Path
    """Absolute, with symlinks resolved."""
    hidden: HiddenList = field(default_factory=HiddenList.default, compare=False)
    """Secret names and places refused below the root (the sandbox hides the same from commands)."""

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
        given = self.root / Path(text).expanduser()
        resolved = given.resolve()
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{path!r} is outside the project folder {self.root}; "
                "give a path inside it (relative paths start at the project folder)"
            )
        # As named and as resolved: a link to a secret and a secret's name on a link are refused.
        why = self.hidden.reason(self.root, Path(os.path.normpath(given)), resolved)
        if why is not None:
            raise HiddenPathError(
                f"{path!r} is hidden from the file tools and from commands: {why}. It is not "
                "read, searched or written; ask the user for what you need from it"
            )
        return resolved

    def hides(self, path: Path) -> bool:
        """True for an entry of a folder that is not hidden itself (as listing finds it) that
        the file tools refuse: by its name, by a hidden place, or by where its link points."""
        if is_secret_name(path.name) or self.hidden.covers(self.root, path):
            return True
        return path.is_symlink() and self.hidden.reason(self.root, path.resolve()) is not None

    def display(self, path: Path) -> str:
        """How a path inside the root is shown to the model: relative, with forward slashes."""
        if path == self.root:
            return "."
        return path.relative_to(self.root).as_posix()

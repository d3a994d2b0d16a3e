"""Copy the starter game into a new package, renamed."""

from __future__ import annotations

import importlib.util
import keyword
import re
import shutil
from importlib import resources
from pathlib import Path

from ..runtime.errors import UserFacingError

TEMPLATE = "starter"
"""The template package's name; every mention of it in the files becomes the new name."""
_SKIP = ("__pycache__", "*.pyc")
MAX_NAME = 64
"""The longest package name: a folder name, well under the file systems' 255 bytes."""
_PACKAGE = __name__.rpartition(".")[0]


class NewGameError(UserFacingError, ValueError):
    """The game cannot be made as asked; the message says why and what to do."""


def new_game(name: str, where: Path) -> Path:
    """Write the starter game as the package `where/name`; returns its folder."""
    problem = _name_problem(name)
    if problem is not None:
        shown = name if len(name) <= MAX_NAME else f"{name[:MAX_NAME]}…"
        raise NewGameError(f"{shown!r} is not a usable package name: {problem}")
    target = where / name
    if target.exists():
        raise NewGameError(f"{target} already exists; pick another name or folder")
    if importlib.util.find_spec(name) is not None:
        raise NewGameError(f"{name!r} is already the name of an importable module; pick another")
    source = Path(str(resources.files(_PACKAGE).joinpath(TEMPLATE)))
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*_SKIP))
    title = name.replace("_", " ").title()
    camel = title.replace(" ", "")
    # "StarterWorld" becomes "TeaStallWorld" in code; "Starter:" becomes "Tea Stall:" in prose.
    in_names = re.compile(TEMPLATE.title() + r"(?=\w)")
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".md"):
            text = path.read_text(encoding="utf-8")
            text = in_names.sub(camel, text).replace(TEMPLATE.title(), title)
            path.write_text(text.replace(TEMPLATE, name), encoding="utf-8")
    return target


def _name_problem(name: str) -> str | None:
    """Why `name` cannot name the package, or None when it can."""
    if keyword.iskeyword(name):
        return (
            f"it is a Python keyword (`import {name}` is a syntax error); pick another word, "
            f"e.g. {name.lower()}_game"
        )
    if not (name.isascii() and name.isidentifier()):
        return (
            "use lower case letters, digits and underscores, starting with a letter, e.g. tea_stall"
        )
    if name != name.lower():
        return f"package names are lower case: try {name.lower()}"
    if len(name) > MAX_NAME:
        # Past the file system's limit for a folder name the copy fails with an OSError.
        return f"it has {len(name)} characters; at most {MAX_NAME} are allowed"
    return None

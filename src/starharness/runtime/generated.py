"""Checking a generated file against a fresh generation (the generators' `--check` mode)."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

STALE = 1
"""`--check`'s exit code for a file that is not a fresh generation (0: it is)."""
_SHOWN_DIFF_LINES = 40


def check_generated(path: Path, fresh: str, current: str | None, regenerate: str) -> int:
    """0 when `current` (what `path` holds; None: unreadable) equals `fresh`; else STALE, with
    the command that regenerates it and the start of a diff on stderr."""
    if current == fresh:
        return 0
    if current is None:
        sys.stderr.write(f"{path}: missing; generate it with: {regenerate}\n")
        return STALE
    diff = list(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            fresh.splitlines(keepends=True),
            f"{path} (checked in)",
            f"{path} (fresh)",
        )
    )
    shown = "".join(diff[:_SHOWN_DIFF_LINES])
    more = len(diff) - _SHOWN_DIFF_LINES
    tail = f"... and {more} more diff lines\n" if more > 0 else ""
    sys.stderr.write(
        f"{path} is stale (not what the code generates); regenerate with: {regenerate}\n"
        f"{shown}{'' if shown.endswith(chr(10)) else chr(10)}{tail}"
    )
    return STALE


def read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None

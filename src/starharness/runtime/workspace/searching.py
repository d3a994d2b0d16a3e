"""Searching file contents inside a workspace (blocking: run in a thread)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .limits import Limits
from .reading import BINARY_PROBE_BYTES, looks_binary, walk
from .root import Workspace, WorkspaceError


def compile_query(query: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    """The query as a pattern: literal text unless `regex`; a bad regex names the problem."""
    flags = re.IGNORECASE if ignore_case else 0
    if not regex:
        return re.compile(re.escape(query), flags)
    try:
        return re.compile(query, flags)
    except re.error as exc:
        raise WorkspaceError(f"invalid regular expression {query!r}: {exc}") from None


@dataclass(slots=True)
class _Scan:
    matches: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    searched: int = 0
    skipped: int = 0
    hidden: int = 0
    stopped: str | None = None


def _files(workspace: Workspace, start: Path, limits: Limits, scan: _Scan) -> Iterator[Path]:
    if start.is_file():
        yield start
        return
    for path, is_folder in walk(workspace, start, limits):
        if workspace.hides(path):
            scan.hidden += 1  # counted, never opened: its lines must not reach the answer
            continue
        if is_folder:
            continue
        if path.is_symlink():
            # Follow a file link only when its target is inside the workspace too.
            try:
                path = workspace.resolve(str(path))
            except WorkspaceError:
                continue
        yield path


def _scan_file(
    path: Path, shown: str, pattern: re.Pattern[str], cap: int, limits: Limits, scan: _Scan
) -> None:
    try:
        if path.stat().st_size > limits.max_search_file_bytes:
            scan.skipped += 1
            return
        with path.open("rb") as handle:
            data = handle.read()
    except OSError:
        scan.skipped += 1
        return
    if looks_binary(data[:BINARY_PROBE_BYTES]):
        scan.skipped += 1
        return
    scan.searched += 1
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if pattern.search(line) is None:
            continue
        if len(scan.matches) >= cap:
            scan.stopped = f"more than {cap} matches"
            return
        text = line.strip()
        if len(text) > limits.max_line_chars:
            text = text[: limits.max_line_chars] + "…"
        scan.matches.append({"path": shown, "line": number, "text": text})


def search(
    workspace: Workspace,
    query: str,
    *,
    path: str,
    regex: bool,
    ignore_case: bool,
    glob: str | None,
    max_results: int,
    limits: Limits,
) -> dict[str, Any]:
    """Lines matching `query` in the text files under `path`, in path order, bounded."""
    pattern = compile_query(query, regex=regex, ignore_case=ignore_case)
    start = workspace.resolve(path)
    if not start.exists():
        raise WorkspaceError(f"{path!r} does not exist in the project folder")
    cap = min(max_results, limits.max_search_results)
    scan = _Scan()
    for file in _files(workspace, start, limits, scan):
        shown = workspace.display(file)
        if glob is not None and not fnmatch.fnmatch(shown if "/" in glob else file.name, glob):
            continue
        if scan.searched + scan.skipped >= limits.max_search_files:
            scan.stopped = f"more than {limits.max_search_files} files; narrow path or glob"
            break
        _scan_file(file, shown, pattern, cap, limits, scan)
        if scan.stopped is not None:
            break
    result: dict[str, Any] = {
        "matches": scan.matches,
        "count": len(scan.matches),
        "files_searched": scan.searched,
        "files_skipped": scan.skipped,
        "truncated": scan.stopped is not None,
    }
    if scan.hidden:
        result["files_hidden"] = scan.hidden
    if scan.stopped is not None:
        result["stopped"] = scan.stopped
    return result

"""How much the file tools read, list, search and write in one call."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_IGNORED_DIRS = (".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv")


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep one call cheap and its answer small enough for a model."""

    max_read_bytes: int = 256 * 1024
    max_write_bytes: int = 1024 * 1024
    max_list_entries: int = 5_000
    max_search_results: int = 1_000
    max_search_file_bytes: int = 1024 * 1024
    max_search_files: int = 20_000
    max_line_chars: int = 400
    ignored_dirs: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_IGNORED_DIRS))
    """Folder names that listing and searching skip when they walk (they can still be named)."""

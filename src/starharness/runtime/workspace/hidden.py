"""The one list of secret files and places no tool may read: `.env` files by name anywhere in the
project, and the user's key folders and the harness's own home by path.

Both ways in use it: the sandbox hides these paths from every confined command (`shell`, the
job tools, code mode) and the file tools (`read_file`, `list_files`, `search_files`,
`write_file`) refuse them (`HiddenPathError`, in root.py). docs/security.md, "Hidden paths".
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..paths import star_harness_home

SECRET_HOME_ENTRIES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
)
"""Entries of the home folder hidden from every tool (keys and tokens live there)."""

SECRET_NAMES = (".env", ".env.*")
"""Globs on one file or folder name, hidden wherever they are (case-insensitively): dotenv files
hold API keys (the README names `./.env` as a place for them), `.env.local` and the like too."""

UNWALKED_DIRS = frozenset((".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"))
"""Folders the sandbox does not search for secret names before each command (they are large and
are not where a project keeps its dotenv files); the file tools refuse such names there too."""


def is_secret_name(name: str) -> bool:
    """True for a file or folder name hidden wherever it is (`.env`, `.ENV`, `.env.local`)."""
    folded = name.casefold()
    return any(fnmatch.fnmatchcase(folded, pattern) for pattern in SECRET_NAMES)


def default_hidden(home: Path | None = None, harness_home: Path | None = None) -> tuple[Path, ...]:
    """The secret places of this user: home entries and the harness's own home (with
    `credentials.env` and the session database)."""
    base = home if home is not None else Path.home()
    own = harness_home if harness_home is not None else star_harness_home()
    return (*(base / entry for entry in SECRET_HOME_ENTRIES), own)


def secret_files(folder: Path, started_in: Path | None = None) -> list[Path]:
    """Every path below `folder` with a secret name (a hidden folder is not entered), and the
    secret names directly in `started_in` (the harness's start folder, whose `./.env` the README
    suggests for keys). Blocking: the sandbox calls it in a thread before each command."""
    found = list(_below(folder))
    start = started_in if started_in is not None else Path.cwd()
    if start != folder:
        try:
            entries = sorted(start.iterdir())
        except OSError:
            entries = []
        found += [entry for entry in entries if is_secret_name(entry.name)]
    return found


def _below(folder: Path) -> Iterator[Path]:
    for current, dirs, files in os.walk(folder):
        base = Path(current)
        kept: list[str] = []
        for name in sorted(dirs):
            if is_secret_name(name):
                yield base / name
            elif name not in UNWALKED_DIRS:
                kept.append(name)
        dirs[:] = kept
        yield from (base / name for name in sorted(files) if is_secret_name(name))


class HiddenList:
    """What the file tools of one workspace refuse: secret names below the root, and secret
    places by path (a place that contains the root is not hidden: the project wins)."""

    def __init__(self, places: Iterable[Path] = ()) -> None:
        self._places: tuple[Path, ...] = ()
        self._inner: dict[Path, tuple[Path, ...]] = {}
        self.add(*places)

    @classmethod
    def default(cls) -> HiddenList:
        return cls(default_hidden())

    @property
    def places(self) -> tuple[Path, ...]:
        return self._places

    def add(self, *places: Path) -> None:
        """Hide more places (absolute; `~` is expanded, symbolic links resolved)."""
        known = set(self._places)
        added: list[Path] = []
        for place in places:
            resolved = Path(os.path.realpath(Path(place).expanduser()))
            if resolved not in known:
                known.add(resolved)
                added.append(resolved)
        self._places = (*self._places, *added)
        self._inner = {}

    def covers(self, root: Path, path: Path) -> bool:
        """True when `path` lies in a hidden place that is itself inside `root` (a listing's fast
        check: usually no place is, so nothing is compared)."""
        places = self._inner.get(root)
        if places is None:
            folded_root = _folded(root)
            places = self._inner[root] = tuple(
                _folded(p) for p in self._places if p != root and _inside(_folded(p), folded_root)
            )
        return bool(places) and any(_inside(_folded(path), place) for place in places)

    def reason(self, root: Path, *candidates: Path) -> str | None:
        """Why one of `candidates` (paths inside `root`: as named, and with links resolved) is
        hidden, or None. Names compare case-insensitively, as they do on macOS and Windows."""
        for candidate in candidates:
            parts = candidate.relative_to(root).parts if candidate.is_relative_to(root) else ()
            secret = next((part for part in parts if is_secret_name(part)), None)
            if secret is not None:
                return (
                    f"files named {secret!r} hold secrets such as API keys "
                    f"(every {' or '.join(SECRET_NAMES)} file is hidden)"
                )
            folded = _folded(candidate)
            for place in self._places:
                if _inside(_folded(root), _folded(place)):
                    continue  # the project lies inside it: the project wins
                if _inside(folded, _folded(place)):
                    return f"{place} holds keys or the harness's own data"
        return None


def _folded(path: Path) -> Path:
    return Path(str(path).casefold())


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)

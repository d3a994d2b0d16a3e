"""The server's own files stay out of sandboxed programs (a resident's run_code)."""

from __future__ import annotations

from pathlib import Path

from ...runtime.kernel import Context
from ...runtime.sandbox import SANDBOX
from ...runtime.session import SESSIONS, SqliteStore

_SQLITE_COMPANIONS = ("", "-wal", "-shm", "-journal")


def hide_own_files(ctx: Context, world: Path | None) -> list[Path]:
    """Hide the world file and an SQLite session store, with their journals, from every
    confined command; the paths hidden (none without a sandbox).

    The harness home, where both live by default, is hidden already; a `--world` or store
    elsewhere (the project folder, say) would otherwise be readable at the read-only tier,
    every player's state and transcripts included.
    """
    sandbox = ctx.maybe(SANDBOX)
    if sandbox is None:
        return []
    files: list[Path] = []
    if world is not None:
        files.append(world)
    sessions = ctx.maybe(SESSIONS)
    if sessions is not None and isinstance(sessions.store, SqliteStore):
        files.append(sessions.store.path)
    hidden = [file.with_name(file.name + suffix) for file in files for suffix in _SQLITE_COMPANIONS]
    sandbox.hide(*hidden)
    return hidden

"""Startup failures of `play` and `serve` in the user's terms: which part failed, and the fix.

The runtime names a failing row by its plugin ("row 'llm' (...LlmPlugin) failed to start");
a player thinks in the game module, the world file, the model server and the port.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..runtime.config import ResolvedProfile

SERVER_ROW = "server"
LLM_ROW = "llm"


def check_world_path(world: str | Path | None, password_env: str | None = None) -> str | None:
    """Why `--world` cannot be used, or None; a missing folder is a typo, not a new world.

    A `postgresql://` URL is checked as a URL (no password in it), never as a file path.
    """
    if world is None:
        if password_env is not None:
            return "--world-password-env needs --world postgresql://..."
        return None
    from ..runtime.session.postgres import PostgresTarget, is_postgres_url

    if isinstance(world, str) and is_postgres_url(world):
        try:
            PostgresTarget(world, password_env)
        except ValueError as exc:
            return f"--world: {exc}"
        return None
    if password_env is not None:
        return "--world-password-env is for a postgresql:// --world, not a world file"
    world = Path(world)
    folder = world.expanduser().parent
    try:
        folder_exists = folder.is_dir()
        is_folder = world.expanduser().is_dir()
    except OSError as exc:
        # A name longer than the file system allows, or a folder we may not read.
        return f"the world file {_shorten(str(world))} cannot be used: {exc.strerror}"
    if not folder_exists:
        return (
            f"the world file {world}: its folder {folder} does not exist (a typo would start "
            "a fresh world); create the folder first or give an existing path"
        )
    if is_folder:
        return f"the world file {world} is a folder; give a file path such as {world}/world.db"
    return None


def _shorten(text: str, limit: int = 120) -> str:
    """`text`, cut in the middle to at most `limit` characters, for echoing user input."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def game_problem(spec: str) -> str | None:
    """Why the game module cannot be loaded, or None."""
    from ..npc import GameDefinitionError, GameLoadError, load_game
    from ..npc.encounter import GameKit

    try:
        GameKit.of(load_game(spec))
    except GameLoadError as exc:
        return f"the game module (--game {spec}): {exc}"
    except GameDefinitionError as exc:
        return f"the game {spec} is not servable: {exc}"
    return None


def startup_problem(exc: BaseException, profile: ResolvedProfile) -> str | None:
    """The failing part and its fix for a row that failed to start, or None if unknown."""
    cause = exc.__cause__ or exc
    row = _failed_row(str(exc))
    server: dict[str, Any] = dict(profile.row(SERVER_ROW).config)
    if isinstance(cause, OSError) and "cannot listen" in str(cause):
        return (
            f"{cause}; is another server running on that port? Choose another --port, or "
            "--port 0 for a free one"
        )
    from ..npc import ResidentDefinitionError

    if isinstance(cause, ResidentDefinitionError):
        return f"--resident: {cause}"
    from ..npc import GameDefinitionError

    if row == SERVER_ROW and isinstance(cause, GameDefinitionError):
        return f"--world: {cause}"
    if row == SERVER_ROW and _world_failure(cause):
        world = _world_label(server.get("world"))
        if world.startswith("postgresql://"):
            if not _schema_failure(cause):
                # Seeding erases a world; a refused connection or a wrong password needs none.
                return (
                    f"the world database {world}: {cause}; is the PostgreSQL server running "
                    "and reachable there? Check the URL's host, port and user, and that "
                    "--world-password-env names a variable holding the password"
                )
            return (
                f"the world database {world}: {cause}; give another --world, or rebuild it with "
                "`star-harness seed --world <url> --world-password-env NAME` (that erases it)"
            )
        return (
            f"the world file {world}: {cause}; give another --world, or rebuild it with "
            f"`star-harness seed --world {world}` (that erases it)"
        )
    if row == LLM_ROW:
        llm: dict[str, Any] = dict(profile.row(LLM_ROW).config)
        where = llm.get("base_url") or f"the {llm.get('provider') or 'default'} provider"
        return (
            f"the model server ({where}): {cause}; check --provider, --base-url and the API "
            "key, or run with --offline"
        )
    return None


def _world_label(world: object) -> str:
    from ..runtime.session.postgres import PostgresTarget, is_postgres_url

    if isinstance(world, str) and is_postgres_url(world):
        return PostgresTarget(world).describe()
    return str(world) if world else "the default world file"


def _failed_row(message: str) -> str | None:
    if not message.startswith("row '"):
        return None
    return message[len("row '") :].split("'", 1)[0]


def _world_failure(cause: BaseException) -> bool:
    if isinstance(cause, sqlite3.Error):
        return True
    # A game's own world errors (Omega station's WorldError) name the world file themselves.
    return any(kind.__name__.endswith("WorldError") for kind in type(cause).__mro__) or (
        isinstance(cause, OSError) and cause.filename is not None
    )


def _schema_failure(cause: BaseException) -> bool:
    # A game's schema errors (Omega station's SchemaVersionError) say the stored world is not
    # one this version can use; only then is rebuilding it the fix.
    return any(kind.__name__.endswith("SchemaVersionError") for kind in type(cause).__mro__)

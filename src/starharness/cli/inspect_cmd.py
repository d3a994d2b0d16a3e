"""`star-harness inspect [ENCOUNTER]`: list transcripts, or print what an NPC or resident saw."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._errors import CliError

if TYPE_CHECKING:
    from ..runtime.session import SessionStore


def register(app: typer.Typer) -> None:
    """Add the `inspect` command to `app`."""
    app.command(
        "inspect",
        help="List kept transcripts (encounters, and residents' turns such as the director's), "
        "or print one: every request the model was sent, and what it did.",
    )(inspect)


def inspect(
    encounter: Annotated[
        str | None,
        typer.Argument(
            help="A session id from the listing, an encounter id, or a resident's name (the "
            "newest with that id or name).",
            metavar="[ENCOUNTER]",
            show_default=False,
        ),
    ] = None,
    sessions: Annotated[
        str | None,
        typer.Option(
            "--sessions",
            help="The session store: an SQLite file (default: $STAR_HARNESS_HOME/sessions.db) or"
            " a postgresql://user@host:port/db URL (no password in it: see --password-env).",
            metavar="FILE|URL",
        ),
    ] = None,
    password_env: Annotated[
        str | None,
        typer.Option(
            "--password-env",
            help="The environment variable holding the PostgreSQL store's password.",
            metavar="NAME",
        ),
    ] = None,
) -> None:
    import asyncio

    from ..runtime.session import default_sessions_path
    from ..runtime.session.postgres import PostgresTarget, is_postgres_url

    where: str | PostgresTarget
    if sessions is not None and is_postgres_url(sessions):
        try:
            where = PostgresTarget(sessions, password_env)
        except ValueError as exc:
            raise CliError(f"inspect: {exc}") from None
    else:
        path = Path(sessions) if sessions is not None else default_sessions_path()
        if not path.is_file():
            raise CliError(f"inspect: there is no session store at {path}")
        where = str(path)

    async def open_store() -> SessionStore:
        from ..runtime.session import SqliteStore
        from ..runtime.session.postgres import PostgresStore

        if isinstance(where, PostgresTarget):
            return await PostgresStore.open(where)
        return await SqliteStore.open(where)

    name = where.describe() if isinstance(where, PostgresTarget) else where
    typer.echo(asyncio.run(_inspect(open_store, name, encounter)), nl=False)


async def _inspect(
    open_store: Callable[[], Awaitable[SessionStore]], path: str, key: str | None
) -> str:
    from ..npc.inspect import find_transcript, list_transcripts, render_transcript
    from ..runtime.session import StoreError

    try:
        store = await open_store()
    except StoreError as exc:
        raise CliError(f"inspect: cannot read {path}: {exc}") from None
    try:
        if key is None:
            found = await list_transcripts(store)
            if not found:
                return f"no transcripts in {path}\n"
            return "".join(info.line() + "\n" for info in found)
        stored = await find_transcript(store, key)
        if stored is None:
            raise CliError(f"inspect: no transcript {key!r} in {path} (run inspect to list them)")
        return render_transcript(stored)
    finally:
        await store.aclose()

"""`star-harness inspect [ENCOUNTER]`: list encounter transcripts, or print what an NPC saw."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError


def register(app: typer.Typer) -> None:
    """Add the `inspect` command to `app`."""
    app.command(
        "inspect",
        help="List kept encounter transcripts, or print one: every request the NPC's model was "
        "sent, and what it did.",
    )(inspect)


def inspect(
    encounter: Annotated[
        str | None,
        typer.Argument(
            help="A session id from the listing, or an encounter id (the newest with that id).",
            metavar="[ENCOUNTER]",
            show_default=False,
        ),
    ] = None,
    sessions: Annotated[
        Path | None,
        typer.Option(
            "--sessions",
            help="The session store (default: $STAR_HARNESS_HOME/sessions.db).",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    import asyncio

    from ..runtime.session import default_sessions_path

    path = sessions if sessions is not None else default_sessions_path()
    if not path.is_file():
        raise CliError(f"inspect: there is no session store at {path}")
    typer.echo(asyncio.run(_inspect(path, encounter)), nl=False)


async def _inspect(path: Path, key: str | None) -> str:
    from ..npc.inspect import find_transcript, list_transcripts, render_transcript
    from ..runtime.session import SqliteStore, StoreError

    try:
        store = await SqliteStore.open(path)
    except StoreError as exc:
        raise CliError(f"inspect: cannot read {path}: {exc}") from None
    try:
        if key is None:
            found = await list_transcripts(store)
            if not found:
                return f"no encounter transcripts in {path}\n"
            return "".join(info.line() + "\n" for info in found)
        stored = await find_transcript(store, key)
        if stored is None:
            raise CliError(f"inspect: no transcript {key!r} in {path} (run inspect to list them)")
        return render_transcript(stored)
    finally:
        await store.aclose()

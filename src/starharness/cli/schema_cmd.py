"""`star-harness schema`: the frame protocol's JSON Schema for a game (moods, attitude, HUD)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError

DEFAULT_GAME = "starharness.voyage:GAME"


def register(app: typer.Typer) -> None:
    """Add the `schema` command to `app`."""
    app.command(
        "schema",
        help="Print (or write with --out) the JSON Schema of the frames a game's server sends "
        "and accepts, with the game's own moods, attitude range and HUD.",
    )(schema)


def schema(
    game: Annotated[
        str,
        typer.Option("--game", help="The game as package.module:attr or ./path/to/package:attr."),
    ] = DEFAULT_GAME,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the schema to this file instead of printing it."),
    ] = None,
) -> None:
    from ..npc import GameDefinitionError, GameLoadError, load_game
    from ..npc.game_schema import game_schema_text

    try:
        text = game_schema_text(load_game(game))
    except (GameLoadError, GameDefinitionError) as error:
        raise CliError(f"schema: {error}") from None
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CliError(f"schema: cannot write {out}: {error.strerror or error}") from None
    typer.echo(f"wrote {out} (frames of {game})")

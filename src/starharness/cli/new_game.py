"""`star-harness new-game NAME`: scaffold a small working game package to change."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError


def register(app: typer.Typer) -> None:
    """Add the `new-game` command to `app`."""
    app.command(
        "new-game",
        help="Make a small working game package NAME (a world, one NPC, one action, a persona, "
        "an offline brain, tests) that `play --game ./NAME` runs at once.",
    )(new_game)


def new_game(
    name: Annotated[str, typer.Argument(help="The package name, e.g. tea_stall.")],
    into: Annotated[
        Path,
        typer.Option("--into", help="The folder to create it in.", file_okay=False),
    ] = Path(),
) -> None:
    from ..scaffold import NewGameError
    from ..scaffold import new_game as scaffold

    try:
        made = scaffold(name, into)
    except NewGameError as error:
        raise CliError(f"new-game: {error}") from None
    # Commands to type in this same shell: a bare folder name needs ./ to be read as a path.
    folder = str(made) if made.parent != Path() else f"./{made}"
    game = shlex.quote(f"{folder}:GAME")
    typer.echo(f"Made the game {name} in {made}/")
    typer.echo(f"  play it     uv run star-harness play --game {game}")
    typer.echo(f"  test it     uv run pytest {shlex.quote(str(made))}")
    typer.echo(f"  its schema  uv run star-harness schema --game {game}")

"""`star-harness seed`: rebuild a fresh Omega station world."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError


def register(app: typer.Typer) -> None:
    """Add the `seed` command to `app`."""
    app.command("seed", help="Rebuild a fresh Omega station world (erases the old one).")(seed)


def seed(
    world: Annotated[
        Path | None,
        typer.Option(
            "--world",
            help="World file to rebuild (default: $STAR_HARNESS_HOME/voyage/world.db).",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    # Imported here so that `star-harness --help` does not load the game.
    from ..voyage import WorldError, seed_world

    try:
        path = seed_world(world)
    except WorldError as error:
        raise CliError(f"seed: {error}") from error
    typer.echo(f"Seeded a fresh Omega station world at {path}")

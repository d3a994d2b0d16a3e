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
        str | None,
        typer.Option(
            "--world",
            help="World file to rebuild (default: $STAR_HARNESS_HOME/voyage/world.db), or "
            "postgresql://user@host:port/db (its schema voyage, in one transaction).",
        ),
    ] = None,
    world_password_env: Annotated[
        str | None,
        typer.Option(
            "--world-password-env",
            help="Variable holding the password of a postgresql:// --world.",
            metavar="NAME",
        ),
    ] = None,
) -> None:
    # Imported here so that `star-harness --help` does not load the game.
    from ..runtime.session.postgres import PostgresTarget, is_postgres_url
    from ..voyage import WorldError, seed_server_world, seed_world
    from ._startup_errors import check_world_path

    # A missing folder is created: seeding is how a new world file is meant to start.
    url = world is not None and is_postgres_url(world)
    problem = check_world_path(world, world_password_env) if url or world_password_env else None
    if problem is not None:
        raise CliError(f"seed: {problem}")
    if world is not None and not url and Path(world).expanduser().is_dir():
        raise CliError(f"seed: the world file {world} is a folder; give a file path")
    try:
        if world is not None and url:
            where = seed_server_world(PostgresTarget(world, world_password_env))
        else:
            where = str(seed_world(Path(world).expanduser() if world is not None else None))
    except WorldError as error:
        raise CliError(f"seed: {error}") from error
    typer.echo(f"Seeded a fresh Omega station world at {where}")

"""`star-harness serve`: the frame protocol for engine clients, without the browser client."""

from __future__ import annotations

import typer

from ._game_options import game_command


def register(app: typer.Typer) -> None:
    """Add the `serve` command to `app`."""
    app.command(
        "serve", help="Serve the frame protocol for engine clients, without the browser client."
    )(game_command("serve", browser_client=False))

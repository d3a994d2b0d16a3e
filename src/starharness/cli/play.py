"""`star-harness play`: the sample game in the browser; with no API key, the offline brain."""

from __future__ import annotations

import typer

from ._game_options import game_command


def register(app: typer.Typer) -> None:
    """Add the `play` command to `app`."""
    app.command(
        "play", help="Play the sample game in the browser (no API key: the built-in offline brain)."
    )(game_command("play", browser_client=True))

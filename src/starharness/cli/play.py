"""`star-harness play`: not built yet; the NPC framework issue replaces this module."""

from __future__ import annotations

import typer

from ._errors import not_built

# Accept any arguments so that every invocation gets the same clear answer.
_ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}


def register(app: typer.Typer) -> None:
    """Add the `play` command to `app`."""
    app.command(
        "play",
        help="Play the sample game in the browser. (not built yet)",
        context_settings=_ANY_ARGUMENTS,
    )(play)


def play(ctx: typer.Context) -> None:
    not_built("play", "NPC framework")

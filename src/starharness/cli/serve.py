"""`star-harness serve`: not built yet; the NPC framework issue replaces this module."""

from __future__ import annotations

import typer

from ._errors import not_built

# Accept any arguments so that every invocation gets the same clear answer.
_ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}


def register(app: typer.Typer) -> None:
    """Add the `serve` command to `app`."""
    app.command(
        "serve",
        help="Serve the game to engine clients (Godot, Unity, Unreal, the web). (not built yet)",
        context_settings=_ANY_ARGUMENTS,
    )(serve)


def serve(ctx: typer.Context) -> None:
    not_built("serve", "NPC framework")

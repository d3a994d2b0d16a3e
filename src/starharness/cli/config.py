"""`star-harness config --dump`: print the resolved profile tree as YAML."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError


def register(app: typer.Typer) -> None:
    """Add the `config` command to `app`."""
    app.command("config", help="Show the configuration a command starts with.")(config)


def config(
    dump: Annotated[
        bool, typer.Option("--dump", help="Print the resolved profile (rows and config) as YAML.")
    ] = False,
    profile: Annotated[
        str, typer.Option("--profile", help="Profile name (play, serve, task, godot) or file.")
    ] = "task",
    patch: Annotated[
        list[Path] | None,
        typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
    ] = None,
) -> None:
    if not dump:
        raise CliError("config: nothing to do; pass --dump to print the resolved profile")
    from .. import composition
    from ..runtime.config import dump_profile

    resolved = composition.load(profile, patch or ())
    sys.stdout.write(dump_profile(resolved))

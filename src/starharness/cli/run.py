"""`star-harness run "TASK"`: one headless agent turn, built from the `task` profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError
from ._llm_options import BaseUrl, Model, PatchFiles, Provider


def register(app: typer.Typer) -> None:
    """Add the `run` command to `app`."""
    app.command(
        "run",
        help="Run one task headless: the answer streams to stdout, tool calls to stderr.",
    )(run)


def run(
    task: Annotated[
        str, typer.Argument(help="What the agent should do.", metavar="TASK", show_default=False)
    ],
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = "task",
    project: Annotated[
        Path | None,
        typer.Option(
            help="Project folder for the file tools (profiles with a workspace row, e.g. godot).",
            show_default=False,
        ),
    ] = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    patch: PatchFiles = None,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow this tool when it asks for approval; repeatable."),
    ] = None,
) -> None:
    if not task.strip():
        raise CliError("run: the task is empty")
    import asyncio

    from .. import app as composition
    from ._command_profile import load_for_command

    resolved = load_for_command(
        "run",
        profile,
        patch or (),
        llm=composition.LlmChoice(provider, model, base_url),
        allow=allow or (),
        project=project,
    )
    raise typer.Exit(asyncio.run(composition.run_headless(resolved, task)))

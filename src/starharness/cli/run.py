"""`star-harness run "TASK"` (or `star-harness --profile NAME "TASK"`): one headless agent
turn, built from the `headless` profile unless `--profile` names another."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError
from ._llm_options import BaseUrl, Model, PatchFiles, Provider

PROFILE_FLAG = "--profile"


def profile_shape(args: list[str]) -> list[str]:
    """`star-harness --profile NAME "TASK" ...` is `star-harness run --profile NAME "TASK" ...`:
    the seed's shape, where a profile name (such as `headless`) rather than a subcommand says
    what runs."""
    if args and (args[0] == PROFILE_FLAG or args[0].startswith(PROFILE_FLAG + "=")):
        return ["run", *args]
    return args


def register(app: typer.Typer) -> None:
    """Add the `run` command to `app`."""
    app.command(
        "run",
        help=(
            "Run one task headless: the answer streams to stdout, tool calls to stderr. "
            'The same: star-harness --profile NAME "TASK".'
        ),
    )(run)


def run(
    task: Annotated[
        str, typer.Argument(help="What the agent should do.", metavar="TASK", show_default=False)
    ],
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = "headless",
    project: Annotated[
        Path | None,
        typer.Option(
            help="Project folder for the file tools and the sandbox (default: the current "
            "directory).",
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

    from .. import composition
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

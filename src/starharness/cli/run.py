"""`star-harness run "TASK"`: one headless agent turn, built from the `task` profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import CliError


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
    provider: Annotated[
        str | None, typer.Option(help="LLM provider: deepseek, openai or openai-compatible.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name (default: the provider's).")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Send requests to this server instead.")
    ] = None,
    patch: Annotated[
        list[Path] | None,
        typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow this tool when it asks for approval; repeatable."),
    ] = None,
) -> None:
    if not task.strip():
        raise CliError("run: the task is empty")
    import asyncio

    from starharness import app as composition

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

"""Options every command that talks to a model shares, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile

AGENT_PROFILE = "agent"
"""The default agent: the profile `chat`, `rpc`, `acp` and `web` start without --profile."""

Provider = Annotated[
    str | None,
    typer.Option(help="LLM provider: deepseek, openai, openai-compatible or llama-cpp."),
]
Model = Annotated[str | None, typer.Option(help="Model name (default: the provider's).")]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Send model requests to this server instead.")
]
PatchFiles = Annotated[
    list[Path] | None,
    typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
]
ProjectDir = Annotated[
    Path | None,
    typer.Option(
        help="Project folder for the file tools (profiles with a workspace row).",
        show_default=False,
    ),
]


def interactive_profile(
    command: str,
    profile: str,
    patch: list[Path] | None,
    choice: tuple[str | None, str | None, str | None],
    project: Path | None,
) -> ResolvedProfile:
    """The profile of a command a person (or a client answering approvals) drives."""
    from .. import composition

    provider, model, base_url = choice
    return composition.load_for_command(
        command,
        profile,
        patch or (),
        llm=composition.LlmChoice(provider, model, base_url),
        project=project,
        interactive=True,
    )

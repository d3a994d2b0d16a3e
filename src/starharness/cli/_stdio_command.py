"""The one shape of `acp` and `rpc`: resolve an interactive profile, then serve it on stdio."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Annotated

import typer

from ._llm_options import (
    AGENT_PROFILE,
    BaseUrl,
    Model,
    PatchFiles,
    ProjectDir,
    Provider,
    interactive_profile,
)

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile

Serve = Callable[["ResolvedProfile"], Coroutine[None, None, None]]


def register_stdio_command(app: typer.Typer, name: str, help: str, serve: Serve) -> None:
    """Add `name` to `app`: the usual profile and LLM options, then `serve` until it returns."""

    def command(
        profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = AGENT_PROFILE,
        project: ProjectDir = None,
        provider: Provider = None,
        model: Model = None,
        base_url: BaseUrl = None,
        patch: PatchFiles = None,
    ) -> None:
        import asyncio

        resolved = interactive_profile(name, profile, patch, (provider, model, base_url), project)
        asyncio.run(serve(resolved))

    command.__name__ = name
    app.command(name, help=help)(command)

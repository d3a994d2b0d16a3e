"""`star-harness acp`: the session API as an Agent Client Protocol agent on stdio (for editors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._llm_options import BaseUrl, Model, PatchFiles, ProjectDir, Provider, interactive_profile

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile


def register(app: typer.Typer) -> None:
    """Add the `acp` command to `app`."""
    app.command(
        "acp",
        help=(
            "Be an ACP agent on stdin/stdout (the Agent Client Protocol of editors such as "
            "Zed; docs/acp.md). Only each turn's final text is reported; approvals become "
            "permission requests. Logs go to stderr."
        ),
    )(acp)


def acp(
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = "task",
    project: ProjectDir = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    patch: PatchFiles = None,
) -> None:
    import asyncio

    resolved = interactive_profile("acp", profile, patch, (provider, model, base_url), project)
    asyncio.run(serve_acp_agent(resolved))


async def serve_acp_agent(resolved: ResolvedProfile) -> None:
    """Start the profile and serve one ACP client on stdio until it closes the connection."""
    from importlib.metadata import version

    from ..runtime.acp import serve_acp
    from ..runtime.config import start
    from ..runtime.protocol import HostInfo

    async with await start(resolved) as runtime:
        info = HostInfo(
            profile=resolved.name, version=version("star-harness"), session_prefix="acp"
        )
        await serve_acp(runtime.ctx, info)

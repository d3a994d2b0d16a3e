"""`star-harness rpc`: the session protocol (JSON-RPC 2.0, one message per line) on stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._llm_options import BaseUrl, Model, PatchFiles, ProjectDir, Provider, interactive_profile

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile


def register(app: typer.Typer) -> None:
    """Add the `rpc` command to `app`."""
    app.command(
        "rpc",
        help=(
            "Serve the session protocol on stdin/stdout: JSON-RPC 2.0, one message per line, "
            "requests initialize, session, prompt and shutdown (docs/session-protocol.md). "
            "Approvals are asked of the client. Logs go to stderr."
        ),
    )(rpc)


def rpc(
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = "task",
    project: ProjectDir = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    patch: PatchFiles = None,
) -> None:
    import asyncio

    resolved = interactive_profile("rpc", profile, patch, (provider, model, base_url), project)
    asyncio.run(serve_rpc(resolved))


async def serve_rpc(resolved: ResolvedProfile) -> None:
    """Start the profile and serve the protocol on stdio until shutdown or end of input."""
    from importlib.metadata import version

    from ..runtime.config import start
    from ..runtime.protocol import HostInfo, serve_stdio

    async with await start(resolved) as runtime:
        info = HostInfo(profile=resolved.name, version=version("star-harness"))
        await serve_stdio(runtime.ctx, info)

"""`star-harness acp`: the session API as an Agent Client Protocol agent on stdio (for editors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ._stdio_command import register_stdio_command

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile


def register(app: typer.Typer) -> None:
    """Add the `acp` command to `app`."""
    register_stdio_command(
        app,
        "acp",
        (
            "Be an ACP agent on stdin/stdout (the Agent Client Protocol of editors such as "
            "Zed; docs/acp.md). Only each turn's final text is reported; approvals become "
            "permission requests. Logs go to stderr."
        ),
        serve_acp_agent,
    )


async def serve_acp_agent(resolved: ResolvedProfile) -> None:
    """Start the profile and serve one ACP client on stdio until it closes the connection."""
    from importlib.metadata import version

    from ..composition import without_unusable_models
    from ..runtime.acp import serve_acp
    from ..runtime.config import start
    from ..runtime.protocol import HostInfo

    # An editor that launches us without a key sees ACP's authMethods, not a crashed agent.
    resolved = await without_unusable_models(resolved, "star-harness acp")
    async with await start(resolved) as runtime:
        info = HostInfo(
            profile=resolved.name, version=version("star-harness"), session_prefix="acp"
        )
        await serve_acp(runtime.ctx, info)

"""`star-harness rpc`: the session protocol (JSON-RPC 2.0, one message per line) on stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ._stdio_command import register_stdio_command

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile


def register(app: typer.Typer) -> None:
    """Add the `rpc` command to `app`."""
    register_stdio_command(
        app,
        "rpc",
        (
            "Serve the session protocol on stdin/stdout: JSON-RPC 2.0, one message per line, "
            "requests initialize, session, prompt and shutdown (docs/session-protocol.md). "
            "Approvals are asked of the client. Logs go to stderr."
        ),
        serve_rpc,
    )


async def serve_rpc(resolved: ResolvedProfile) -> None:
    """Start the profile and serve the protocol on stdio until shutdown or end of input."""
    from importlib.metadata import version

    from ..composition import without_unusable_models
    from ..runtime.config import start
    from ..runtime.protocol import HostInfo, serve_stdio

    # Without a usable model the server still starts: initialize says so (`model`), and each
    # prompt is refused with the variable or flag to set.
    resolved = await without_unusable_models(resolved, "star-harness rpc")
    async with await start(resolved) as runtime:
        info = HostInfo(profile=resolved.name, version=version("star-harness"))
        await serve_stdio(runtime.ctx, info)

"""`star-harness mcp`: serve a profile's tools to MCP clients over stdio (Godot mode by default)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile

DEFAULT_PROFILE = "godot"


def register(app: typer.Typer) -> None:
    """Add the `mcp` command to `app`."""
    app.command(
        "mcp",
        help=(
            "Serve the profile's tools over MCP on stdin/stdout (for Claude Code, Cursor and "
            "other MCP clients). Tools that need approval are refused unless --allow names "
            "them. Logs go to stderr."
        ),
    )(mcp)


def mcp(
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = DEFAULT_PROFILE,
    project: Annotated[
        Path | None,
        typer.Option(
            help="Project folder for the file tools and the Godot bridge (default: here).",
            show_default=False,
        ),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow this tool when it asks for approval; repeatable."),
    ] = None,
    patch: Annotated[
        list[Path] | None,
        typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
    ] = None,
) -> None:
    import asyncio

    from ._command_profile import load_for_command

    resolved = load_for_command(
        "mcp", profile, patch or (), allow=allow or (), project=project, tools_only=True
    )
    _log_to_stderr()
    asyncio.run(serve(resolved))


async def serve(resolved: ResolvedProfile) -> None:
    """Start the profile with stdout guarded, then serve its tools until stdin closes."""
    import logging
    from importlib.metadata import PackageNotFoundError, version

    from ..runtime.config import start
    from ..runtime.mcp_server import ServerInfo, serve_stdio, stdout_to_stderr
    from ..runtime.tools import TOOLS

    try:
        package_version = version("star-harness")
    except PackageNotFoundError:
        package_version = "0"
    info = ServerInfo(
        name="star-harness", version=package_version, instructions=resolved.description or None
    )
    # Plugins start before the transport claims stdout, so anything they print goes to stderr.
    with stdout_to_stderr():
        runtime = await start(resolved)
    try:
        tools = runtime.ctx.get(TOOLS).names()
        logging.getLogger("starharness.cli.mcp").info(
            "serving %d tools of profile %r over MCP stdio: %s",
            len(tools),
            resolved.name,
            ", ".join(tools),
        )
        await serve_stdio(runtime.ctx, info)
    finally:
        with stdout_to_stderr():
            await runtime.aclose()


def _log_to_stderr() -> None:
    import logging
    import sys

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="star-harness mcp: %(levelname)s %(message)s",
    )
    # Our own progress (bridge, calls, approvals) at INFO; libraries only when they warn.
    logging.getLogger("starharness").setLevel(logging.INFO)

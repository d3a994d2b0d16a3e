"""Serving a runtime's tools over MCP on stdin/stdout, where only protocol frames may appear."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Generator

from mcp.server.stdio import stdio_server

from ..kernel import Context
from .server import McpTools, ServerInfo, build_server, open_layer


@contextlib.contextmanager
def stdout_to_stderr() -> Generator[None]:
    """Send Python-level prints to stderr: on an MCP stdio server, stdout carries frames only."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


async def serve_stdio(ctx: Context, info: ServerInfo | None = None) -> None:
    """Serve the tools `ctx` sees until the client closes stdin.

    Call it with the process's real `sys.stdout` in place: the transport claims file
    descriptors 0 and 1 and points fd 1 at stderr while it serves, so stray writes of any
    kind (prints, child processes) miss the protocol stream.
    """
    layer = open_layer(ctx)
    server = build_server(McpTools(layer), info or ServerInfo())
    try:
        async with stdio_server() as (read, write):
            with stdout_to_stderr():
                await server.run(read, write, server.create_initialization_options())
    finally:
        await layer.dispose()

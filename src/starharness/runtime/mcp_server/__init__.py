"""runtime/mcp_server: serve a runtime's registered tools to MCP clients over stdio."""

from .server import (
    ServerInfo,
)
from .stdio import serve_stdio, stdout_to_stderr

__all__ = [
    "ServerInfo",
    "serve_stdio",
    "stdout_to_stderr",
]

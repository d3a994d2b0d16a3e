"""runtime/mcp_server: serve a runtime's registered tools to MCP clients over stdio."""

from .server import MCP_LAYER, McpTools, ServerInfo, build_server, open_layer
from .stdio import serve_stdio, stdout_to_stderr

__all__ = [
    "MCP_LAYER",
    "McpTools",
    "ServerInfo",
    "build_server",
    "open_layer",
    "serve_stdio",
    "stdout_to_stderr",
]

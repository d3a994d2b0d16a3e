"""runtime/mcp_client: tools of external MCP servers as `mcp_<server>_<tool>` (off by default)."""

from .config import McpClientConfig, McpServerConfig
from .connection import McpUnavailableError, Restarts, ServerConnection
from .plugin import MCP_CLIENTS, McpClientPlugin, McpClients
from .tools import MCP_TAG, UNAVAILABLE, bridge_tool, tool_name

__all__ = [
    "MCP_CLIENTS",
    "MCP_TAG",
    "UNAVAILABLE",
    "McpClientConfig",
    "McpClientPlugin",
    "McpClients",
    "McpServerConfig",
    "McpUnavailableError",
    "Restarts",
    "ServerConnection",
    "bridge_tool",
    "tool_name",
]

"""McpClientPlugin: external MCP servers' tools, registered behind the runtime's tool pipeline."""

from __future__ import annotations

import logging

from ..kernel import Context, Plugin, ServiceKey
from ..tools import TOOLS
from .config import McpClientConfig
from .connection import McpUnavailableError, Restarts, ServerConnection
from .tools import bridge_tool, unavailable_tool

_log = logging.getLogger("starharness.runtime.mcp_client")


class McpClients:
    """The bridge's servers, for status displays (`ctx.get(MCP_CLIENTS)`)."""

    def __init__(self) -> None:
        self.connections: list[ServerConnection] = []

    def status(self) -> list[dict[str, str]]:
        return [
            {
                "name": c.name,
                "target": c.target,
                "state": c.state,
                "problem": c.problem,
                "failed_restarts": str(c.failed_restarts),
            }
            for c in self.connections
        ]


MCP_CLIENTS: ServiceKey[McpClients] = ServiceKey("mcp_clients", "add the MCP client bridge row")


class McpClientPlugin(Plugin[McpClientConfig]):
    """Starts each enabled server; a server that fails to start is logged and left out."""

    Config = McpClientConfig
    inject = (TOOLS,)
    provides = (MCP_CLIENTS,)

    async def setup(self, ctx: Context, config: McpClientConfig) -> None:
        clients = McpClients()
        ctx.provide(MCP_CLIENTS, clients)
        if not config.enabled:
            return
        restarts = Restarts(
            attempts=config.restart_attempts,
            backoff_s=config.restart_backoff_s,
            start_timeout_s=config.start_timeout_s,
        )
        for server in config.servers:
            if not server.enabled:
                continue
            connection = ServerConnection(server, restarts)
            clients.connections.append(connection)
            ctx.scope.add(connection.aclose)
            try:
                tools = await connection.start(config.start_timeout_s)
            except McpUnavailableError as error:
                # Tools the row names still appear, so a call says why it cannot run.
                declared = server.tools or []
                _log.error(
                    "%s; %s",
                    error,
                    "its listed tools answer with this error"
                    if declared
                    else "no tools registered",
                )
                for remote in declared:
                    ctx.get(TOOLS).register(
                        unavailable_tool(connection, remote, str(error), ask=server.ask)
                    )
                continue
            wanted = set(server.tools) if server.tools is not None else None
            for tool in tools:
                if wanted is not None and tool.name not in wanted:
                    continue
                definition = bridge_tool(
                    connection, tool, ask=server.ask, timeout_s=config.call_timeout_s
                )
                ctx.get(TOOLS).register(definition)

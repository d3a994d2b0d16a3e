"""An MCP server whose tools are the tools registered in a runtime, run through its pipeline."""

from __future__ import annotations

import copy
import itertools
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext

from ..approvals import APPROVAL_DECIDED, ApprovalDecided
from ..kernel import Context
from ..llm.types import ToolCall, ToolSchema
from ..tools import MUTATING, TOOLS, ToolRegistry

_log = logging.getLogger("starharness.runtime.mcp_server")

MCP_LAYER = "mcp"


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """How the server introduces itself to MCP clients."""

    name: str = "star-harness"
    version: str = "0"
    instructions: str | None = None


class McpTools:
    """Lists a context's tools for MCP and runs MCP calls as tool calls of that context.

    Calls go through the registry's whole pipeline: argument validation, pre-execute policies,
    approvals (the context's approval service decides), the tool, post-execute hooks.
    """

    def __init__(self, ctx: Context, *, session_id: str | None = None) -> None:
        self.ctx = ctx
        self.session_id = session_id or f"mcp-{uuid.uuid4().hex[:12]}"
        self._numbers = itertools.count(1)

    @property
    def registry(self) -> ToolRegistry:
        return self.ctx.get(TOOLS)

    def listing(self) -> list[types.Tool]:
        """Every visible tool with its JSON Schema, in the registry's stable order."""
        registry = self.registry
        listed: list[types.Tool] = []
        for schema in registry.schemas():
            definition = registry.get(schema.name)
            tags = definition.tags if definition is not None else frozenset[str]()
            listed.append(_mcp_tool(schema, tags))
        return listed

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Run one call; failures (unknown tool, bad arguments, refusals) come back as errors."""
        call_id = f"{self.session_id}-{next(self._numbers)}"
        call = ToolCall(call_id, name, json.dumps(arguments or {}))
        outcome = await self.registry.execute(call, self.ctx, session_id=self.session_id)
        if outcome.is_error:
            _log.info("MCP call %s %s failed: %s", call_id, name, outcome.content)
        else:
            _log.info("MCP call %s %s ok", call_id, name)
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.content)],
            is_error=outcome.is_error,
        )


def _mcp_tool(schema: ToolSchema, tags: frozenset[str]) -> types.Tool:
    # A deep copy: the registry's schema objects are shared and must never be mutated.
    parameters: dict[str, Any] = copy.deepcopy(dict(schema.parameters))
    if "type" not in parameters:
        # MCP wants an object schema at the root; a tool without one takes no arguments.
        parameters = {"type": "object", "properties": {}}
    read_only = MUTATING not in tags
    annotations = types.ToolAnnotations(read_only_hint=read_only)
    return types.Tool(
        name=schema.name,
        description=schema.description,
        input_schema=parameters,
        annotations=annotations,
    )


def build_server(tools: McpTools, info: ServerInfo) -> Server[Any]:
    """A low-level MCP server answering tools/list and tools/call from `tools`."""

    async def list_tools(
        request: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listing())

    async def call_tool(
        request: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await tools.call(params.name, params.arguments)

    return Server(
        info.name,
        version=info.version,
        instructions=info.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def open_layer(ctx: Context) -> Context:
    """The context MCP calls run in: its own layer, with approval answers logged to stderr."""
    layer = ctx.child(MCP_LAYER)

    def decided(answer: ApprovalDecided) -> None:
        tool, decision = answer.request.tool, answer.decision
        if decision.allowed:
            _log.info("approval: %s %s", tool, decision)
        else:
            _log.warning("approval: %s %s: %s", tool, decision, answer.message)

    layer.on(APPROVAL_DECIDED, decided)
    return layer

"""An external MCP server's tools as runtime tools named `mcp_<server>_<tool>`."""

from __future__ import annotations

import json
import re
from typing import Any, cast

from mcp.types import CallToolResult, TextContent, Tool

from ..tools import (
    MUTATING,
    REQUIRES_APPROVAL,
    ToolArgsError,
    ToolDefinition,
    ToolFailure,
    ToolRunContext,
    ToolSuccess,
    define_raw_tool,
)
from .connection import McpUnavailableError, ServerConnection

MCP_TAG = "mcp"
UNAVAILABLE = "mcp_unavailable"
"""Failure code of a call whose server is not running."""
TOOL_REPORTED_ERROR = "mcp_tool_error"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def tool_name(server: str, tool: str) -> str:
    """`mcp_<server>_<tool>` with characters tool names cannot hold replaced, at most 64."""
    return _UNSAFE.sub("_", f"mcp_{server}_{tool}")[:64]


def _parse(raw: str) -> dict[str, Any]:
    try:
        value: Any = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        raise ToolArgsError(f"arguments are not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ToolArgsError("arguments must be a JSON object")
    return cast(dict[str, Any], value)


def result_of(server: str, result: CallToolResult) -> ToolSuccess | ToolFailure:
    """What the model reads: the text parts joined; other parts named by their type."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content]")
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    if result.is_error:
        return ToolFailure(
            text or f"the MCP server {server!r} reported an error", TOOL_REPORTED_ERROR
        )
    return ToolSuccess(result.structured_content or text, text)


def bridge_tool(
    connection: ServerConnection, tool: Tool, *, ask: bool, timeout_s: float
) -> ToolDefinition[dict[str, Any]]:
    """One runtime tool that forwards its calls to `tool` on `connection`."""
    server = connection.name
    remote = tool.name

    async def execute(arguments: dict[str, Any], run: ToolRunContext) -> ToolSuccess | ToolFailure:
        try:
            result = await connection.call(remote, arguments)
        except McpUnavailableError as error:
            return ToolFailure(f"{error}; its tools cannot run now", UNAVAILABLE)
        return result_of(server, result)

    tags = {MCP_TAG, f"{MCP_TAG}:{server}"}
    if ask:
        tags |= {REQUIRES_APPROVAL, MUTATING}
    schema = tool.input_schema if tool.input_schema else _EMPTY_OBJECT
    description = (tool.description or tool.title or remote).strip()
    return define_raw_tool(
        tool_name(server, remote),
        f"{description} (from the MCP server {server!r})",
        schema,
        _parse,
        execute,
        timeout_s=timeout_s,
        tags=tags,
    )


def unavailable_tool(
    connection: ServerConnection, remote: str, problem: str, *, ask: bool
) -> ToolDefinition[dict[str, Any]]:
    """A declared tool of a server that did not start: every call is a clear tool error."""
    server = connection.name

    async def execute(arguments: dict[str, Any], run: ToolRunContext) -> ToolFailure:
        return ToolFailure(f"{problem}; its tools cannot run now", UNAVAILABLE)

    tags = {MCP_TAG, f"{MCP_TAG}:{server}"}
    if ask:
        tags |= {REQUIRES_APPROVAL, MUTATING}
    return define_raw_tool(
        tool_name(server, remote),
        f"{remote} from the MCP server {server!r}, which is not running",
        _EMPTY_OBJECT,
        _parse,
        execute,
        tags=tags,
    )

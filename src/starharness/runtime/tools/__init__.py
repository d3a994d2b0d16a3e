"""runtime/tools: tool definitions, the layered registry and the execution pipeline."""

from .arguments import ToolArgsError, describe_invalid, parameters_schema
from .decorator import tool
from .definition import (
    MUTATING,
    REQUIRES_APPROVAL,
    Execute,
    ToolDefinition,
    ToolDefinitionError,
    define_raw_tool,
    define_tool,
)
from .hooks import (
    TOOL_POST_EXECUTE,
    TOOL_PRE_EXECUTE,
    TOOL_RESULT,
    PostExecute,
    PreExecute,
    Verdict,
)
from .keys import TOOLS
from .pipeline import RunFactory
from .plugin import ToolsConfig, ToolsPlugin
from .registry import UNLISTED_TOOLS, ToolConflictError, ToolRegistry, ordered_names
from .results import (
    FailureCode,
    ToolFailure,
    ToolOutcome,
    ToolResult,
    ToolSuccess,
    render_content,
)
from .run import CancelSignal, ToolRunContext

__all__ = [
    "MUTATING",
    "REQUIRES_APPROVAL",
    "TOOLS",
    "TOOL_POST_EXECUTE",
    "TOOL_PRE_EXECUTE",
    "TOOL_RESULT",
    "UNLISTED_TOOLS",
    "CancelSignal",
    "Execute",
    "FailureCode",
    "PostExecute",
    "PreExecute",
    "RunFactory",
    "ToolArgsError",
    "ToolConflictError",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResult",
    "ToolRunContext",
    "ToolSuccess",
    "ToolsConfig",
    "ToolsPlugin",
    "Verdict",
    "define_raw_tool",
    "define_tool",
    "describe_invalid",
    "ordered_names",
    "parameters_schema",
    "render_content",
    "tool",
]

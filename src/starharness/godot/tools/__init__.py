"""The 27 godot_* tools: catalogue, parameter models, dispatch and outcomes."""

from .catalogue import (
    GODOT_TOOLS,
    TOOLS_BY_NAME,
    GodotToolSpec,
    enabled_specs,
    tool_spec,
)
from .dispatch import ToolCaller, describe_validation, run_tool
from .outcome import GodotOutcome
from .params import ToolParams
from .paths import to_res_path
from .results import RESULT_CHAR_CAP, render_result

__all__ = [
    "GODOT_TOOLS",
    "RESULT_CHAR_CAP",
    "TOOLS_BY_NAME",
    "GodotOutcome",
    "GodotToolSpec",
    "ToolCaller",
    "ToolParams",
    "describe_validation",
    "enabled_specs",
    "render_result",
    "run_tool",
    "to_res_path",
    "tool_spec",
]

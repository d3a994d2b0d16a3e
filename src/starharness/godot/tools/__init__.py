"""The 27 godot_* tools: catalogue, parameter models, dispatch and outcomes."""

from .catalogue import (
    GODOT_TOOLS,
    GodotToolSpec,
    enabled_specs,
    tool_spec,
)
from .outcome import GodotOutcome
from .results import RESULT_CHAR_CAP, render_result

__all__ = [
    "GODOT_TOOLS",
    "RESULT_CHAR_CAP",
    "GodotOutcome",
    "GodotToolSpec",
    "enabled_specs",
    "render_result",
    "tool_spec",
]

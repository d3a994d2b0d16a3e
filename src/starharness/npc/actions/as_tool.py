"""What a game lists as an action, as the runtime tool the model is offered."""

from __future__ import annotations

from typing import Any

from ...runtime.tools import ToolDefinition
from .factory import GameAction


def action_tool(item: object) -> ToolDefinition[Any] | None:
    """The tool of a `define_game_action` action, a plain tool itself, or None for anything else."""
    if isinstance(item, GameAction):
        action: GameAction[Any] = item  # pyright: ignore[reportUnknownVariableType]
        return action.tool
    if isinstance(item, ToolDefinition):
        tool: ToolDefinition[Any] = item  # pyright: ignore[reportUnknownVariableType]
        return tool
    return None

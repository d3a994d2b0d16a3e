"""A game's tools, resolved once per server and shared by every encounter's agent layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...runtime.errors import StarHarnessError
from ...runtime.tools import ToolDefinition
from ..actions import GameAction
from ..frames import FrameProtocol, build_protocol
from ..game import Game
from .decision import DecisionDefinitionError, define_decision_tool
from .mapping import SpeechStyle
from .speech_tool import define_speech_tool


class GameDefinitionError(StarHarnessError, ValueError):
    """A Game object cannot be served as declared; the message says what to change."""


@dataclass(frozen=True, slots=True)
class GameKit:
    """What every encounter of one game shares: tools (schemas built once), frames, speech."""

    game: Game
    tools: tuple[ToolDefinition[Any], ...]
    speech_tool: ToolDefinition[Any]
    protocol: FrameProtocol
    style: SpeechStyle
    decision_tool: ToolDefinition[Any]
    """The decide-act-speak plan's decision over every action but speech."""

    @classmethod
    def of(cls, game: Game) -> GameKit:
        """Resolve a game's actions and speaking tool; raises GameDefinitionError."""
        tools: dict[str, ToolDefinition[Any]] = {}
        for item in game.actions:
            tool = _as_tool(item)
            if tool.name in tools:
                raise GameDefinitionError(
                    f"game {game.name!r}: two actions are named {tool.name!r}"
                )
            tools[tool.name] = tool
        contract = game.speech
        speech = tools.get(contract.tool_name)
        if speech is None:
            speech = define_speech_tool(contract, game.moods)
            tools[speech.name] = speech
        if contract.max_options < 1:
            raise GameDefinitionError(f"game {game.name!r}: speech max_options must be >= 1")
        if not 0 <= contract.min_options <= contract.max_options:
            raise GameDefinitionError(
                f"game {game.name!r}: speech min_options must be between 0 and max_options"
            )
        protocol = build_protocol(
            game.moods,
            game.attitude_range,
            game.hud_model,
            max_options=contract.max_options,
        )
        style = SpeechStyle(contract, tuple(game.moods), game.default_mood)
        actions = [tool for tool in tools.values() if tool.name != speech.name]
        try:
            decision = define_decision_tool(actions)
        except DecisionDefinitionError as exc:
            raise GameDefinitionError(f"game {game.name!r}: {exc}") from None
        if decision.name in tools:
            raise GameDefinitionError(
                f"game {game.name!r}: an action is named {decision.name!r}, the decision "
                "tool's name"
            )
        return cls(game, tuple(tools.values()), speech, protocol, style, decision)


def _as_tool(item: object) -> ToolDefinition[Any]:
    if isinstance(item, GameAction):
        action: GameAction[Any] = item  # pyright: ignore[reportUnknownVariableType]
        return action.tool
    if isinstance(item, ToolDefinition):
        tool: ToolDefinition[Any] = item  # pyright: ignore[reportUnknownVariableType]
        return tool
    raise GameDefinitionError(
        f"a game action must come from define_game_action (or be a tool), got {item!r}"
    )

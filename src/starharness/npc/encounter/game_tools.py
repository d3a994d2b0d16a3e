"""A game's tools, resolved once per server and shared by every encounter's agent layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...runtime.tools import ToolDefinition
from ..actions import action_tool
from ..frames import FrameProtocol, build_protocol
from ..game import Game
from .archetype_kit import ArchetypeKit, resolve_archetypes
from .errors import GameDefinitionError
from .mapping import SpeechStyle
from .speech_tool import define_speech_tool


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
    default: ArchetypeKit
    """What an NPC whose archetype the game does not declare gets: every action."""
    archetypes: Mapping[str, ArchetypeKit]
    """The game's declared archetypes by name."""

    def archetype(self, name: str) -> ArchetypeKit:
        """The kit of archetype `name`, or the default when the game does not declare it."""
        return self.archetypes.get(name, self.default)

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
        default, archetypes = resolve_archetypes(game, tuple(tools.values()), speech)
        return cls(
            game,
            default.tools,
            speech,
            protocol,
            style,
            default.decision_tool,
            default,
            archetypes,
        )


def _as_tool(item: object) -> ToolDefinition[Any]:
    tool = action_tool(item)
    if tool is None:
        raise GameDefinitionError(
            f"a game action must come from define_game_action (or be a tool), got {item!r}"
        )
    return tool

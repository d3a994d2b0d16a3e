"""A game's archetypes resolved against its actions: each one's tools, decision tool and texts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...runtime.tools import ToolDefinition
from ..archetype import Archetype
from ..game import Game
from .decision import DecisionDefinitionError, define_decision_tool
from .errors import GameDefinitionError
from .plans import PLAN_NAMES, TurnPlanName

DEFAULT_ARCHETYPE = ""
"""The name of the preset an NPC gets when the game does not declare its archetype."""
_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ArchetypeKit:
    """One archetype's parts, resolved once per game: tools (schemas shared) and static text."""

    name: str
    tools: tuple[ToolDefinition[Any], ...]
    """Its actions and the speaking tool, in the game's order."""
    decision_tool: ToolDefinition[Any]
    """The decide-act-speak plan's decision over its actions but speech."""
    protocol_text: str
    shared_text: str
    """Its sections joined as the prompt joins sections ("" when it declares none)."""
    turn_plan: TurnPlanName | None


def resolve_archetypes(
    game: Game, tools: Sequence[ToolDefinition[Any]], speech: ToolDefinition[Any]
) -> tuple[ArchetypeKit, Mapping[str, ArchetypeKit]]:
    """The game's default kit and its declared archetypes by name; raises GameDefinitionError."""
    default = ArchetypeKit(
        DEFAULT_ARCHETYPE,
        tuple(tools),
        _decision(game, DEFAULT_ARCHETYPE, tools, speech),
        game.protocol_text,
        "",
        game.turn_plan,
    )
    kits: dict[str, ArchetypeKit] = {}
    for archetype in game.archetypes:
        if not isinstance(archetype, Archetype):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise GameDefinitionError(
                f"game {game.name!r}: archetypes must be Archetype objects, got {archetype!r}"
            )
        if not archetype.name.strip():
            raise GameDefinitionError(f"game {game.name!r}: an archetype needs a name")
        if archetype.name in kits:
            raise GameDefinitionError(
                f"game {game.name!r}: two archetypes are named {archetype.name!r}"
            )
        kits[archetype.name] = _resolve(game, archetype, default, speech)
    return default, kits


def _resolve(
    game: Game, archetype: Archetype, default: ArchetypeKit, speech: ToolDefinition[Any]
) -> ArchetypeKit:
    where = f"game {game.name!r}, archetype {archetype.name!r}"
    if archetype.turn_plan is not None and archetype.turn_plan not in PLAN_NAMES:
        raise GameDefinitionError(
            f"{where}: unknown turn plan {archetype.turn_plan!r} (known: {', '.join(PLAN_NAMES)})"
        )
    for text in archetype.sections:
        if not isinstance(text, str) or not text.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise GameDefinitionError(f"{where}: a section must be non-empty literal text")
    tools, decision = default.tools, default.decision_tool
    known = {tool.name for tool in default.tools}
    named = [*(archetype.actions or ()), *archetype.without]
    unknown = [name for name in named if name not in known]
    if unknown:
        raise GameDefinitionError(
            f"{where}: no action named {', '.join(map(repr, unknown))} "
            f"(the game's actions: {', '.join(sorted(known))})"
        )
    if speech.name in archetype.without:
        raise GameDefinitionError(f"{where}: every NPC speaks; {speech.name!r} cannot be left out")
    wanted = known if archetype.actions is None else {*archetype.actions, speech.name}
    wanted = wanted.difference(archetype.without)
    chosen = tuple(tool for tool in default.tools if tool.name in wanted)
    if len(chosen) != len(default.tools):
        # A narrower set gets its own decision schema; the full set shares the default's.
        tools, decision = chosen, _decision(game, archetype.name, chosen, speech)
    protocol = game.protocol_text if archetype.protocol_text is None else archetype.protocol_text
    return ArchetypeKit(
        archetype.name,
        tools,
        decision,
        protocol,
        _SEPARATOR.join(archetype.sections),
        archetype.turn_plan if archetype.turn_plan is not None else game.turn_plan,
    )


def _decision(
    game: Game, name: str, tools: Sequence[ToolDefinition[Any]], speech: ToolDefinition[Any]
) -> ToolDefinition[Any]:
    actions = [tool for tool in tools if tool.name != speech.name]
    try:
        decision = define_decision_tool(actions)
    except DecisionDefinitionError as exc:
        which = f"archetype {name!r}: " if name else ""
        raise GameDefinitionError(f"game {game.name!r}: {which}{exc}") from None
    if any(tool.name == decision.name for tool in tools):
        raise GameDefinitionError(
            f"game {game.name!r}: an action is named {decision.name!r}, the decision tool's name"
        )
    return decision

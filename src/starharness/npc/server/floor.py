"""Who answers in a scene of several NPCs: the names a line addresses, found without a model.

The rule is the framework's and game-agnostic: a line addresses the scene's NPCs it names (the
full name, or any word of it that no other NPC of the scene shares), in the order it names
them. Nothing named: the caller decides (the NPC who spoke last holds the floor).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

_MIN_WORD: Final = 3
"""Shorter name words ("Al", "of") are too common in speech to address anyone."""
_WORD: Final = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class Named:
    """An NPC of a scene as the floor rule sees it: its id and its name."""

    id: str
    name: str


def _calls(npc: Named) -> set[str]:
    words = {word.casefold() for word in _WORD.findall(npc.name) if len(word) >= _MIN_WORD}
    return words | {npc.name.casefold()}


def addressed(text: str, npcs: Sequence[Named], *, speaker: str | None = None) -> list[str]:
    """The ids of the NPCs `text` names, in the order it first names them; `speaker` (an NPC
    naming itself) is left out. A name word two NPCs share addresses neither."""
    calls = {npc.id: _calls(npc) for npc in npcs}
    shared = {word for npc in npcs for word in calls[npc.id] if _holders(word, calls) > 1}
    folded = text.casefold()
    found: list[tuple[int, str]] = []
    for npc in npcs:
        if npc.id == speaker:
            continue
        places = [_position(folded, word) for word in calls[npc.id] - shared]
        named_at = [at for at in places if at >= 0]
        if named_at:
            found.append((min(named_at), npc.id))
    return [npc_id for _, npc_id in sorted(found)]


def _holders(word: str, calls: dict[str, set[str]]) -> int:
    return sum(1 for words in calls.values() if word in words)


def _position(folded: str, word: str) -> int:
    match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", folded)
    return -1 if match is None else match.start()

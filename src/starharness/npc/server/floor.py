"""Who answers in a scene of several NPCs: the names a line addresses, found without a model.

The rule is the framework's and game-agnostic: a line addresses the scene's NPCs it names (the
full name, or any word of it of three letters or more that no other NPC's name has), in the
order it names them. Nothing named: the caller decides (the NPC who spoke last holds the floor).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final

_MIN_WORD: Final = 3
"""Shorter name words ("Al", "of") are too common in speech to address anyone."""
_WORD: Final = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class Named:
    """An NPC of a scene as the floor rule sees it: its id and its name."""

    id: str
    name: str


def _words(npc: Named) -> set[str]:
    return {word.casefold() for word in _WORD.findall(npc.name) if len(word) >= _MIN_WORD}


def _calls(npcs: Sequence[Named]) -> dict[str, set[str]]:
    """What addresses each NPC: its full name, and each word of it no other NPC's name has."""
    words = {npc.id: _words(npc) for npc in npcs}
    holders = Counter(word for held in words.values() for word in held)
    return {
        npc.id: {word for word in words[npc.id] if holders[word] == 1} | {npc.name.casefold()}
        for npc in npcs
    }


def addressed(text: str, npcs: Sequence[Named], *, speaker: str | None = None) -> list[str]:
    """The ids of the NPCs `text` names, in the order it first names them; `speaker` (an NPC
    naming itself) is left out. A name word two NPCs share addresses neither."""
    calls = _calls(npcs)
    folded = text.casefold()
    found: list[tuple[int, str]] = []
    for npc in npcs:
        if npc.id == speaker:
            continue
        named_at = [at for at in map(partial(_position, folded), calls[npc.id]) if at >= 0]
        if named_at:
            found.append((min(named_at), npc.id))
    return [npc_id for _, npc_id in sorted(found)]


def _position(folded: str, word: str) -> int:
    match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", folded)
    return -1 if match is None else match.start()

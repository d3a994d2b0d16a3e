"""Reading what the framework tells an NPC of a scene: what the others said (`npc.heard`), the
line another NPC turned to it with, and the lore it was given, as a model would read them.

The texts are the framework's; the brain matches them by their wording (a test checks it
against the framework's own constants), never by importing the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

HEARD_HEADING: Final = "Said in the scene since you last spoke:"
"""First line of the `npc.heard` context entry."""
LORE_HEADING: Final = "Lore you know (use it only if it helps):"
"""First line of the `npc.lore` context entry."""
PLAYER: Final = "The player"
"""How the scene names the player in what an NPC heard and is answering."""

_ITEM: Final = "- "
_HEARD_LINE = re.compile(r'^- (.+?): "(.*)"$')
_TO_PLAYER = re.compile(r"^" + PLAYER + r", to (.+)$")
_ANSWERING = re.compile(r'^(.+?) says to you(?: and (.+?))?: "(.*)"$', re.S)


@dataclass(frozen=True, slots=True)
class Heard:
    """One line said in the scene, heard by this NPC: who said it, to whom, what."""

    speaker: str
    """An NPC's name, or `PLAYER`."""
    text: str
    to: tuple[str, ...] = ()
    """For the player's lines: the NPCs it was for."""

    @property
    def by_player(self) -> bool:
        return self.speaker == PLAYER


@dataclass(frozen=True, slots=True)
class Answering:
    """This turn answers a line another said to this NPC (it only speaks)."""

    speaker: str
    """The NPC who turned to this one, or `PLAYER` (a line for this NPC and others)."""
    text: str

    @property
    def by_player(self) -> bool:
        return self.speaker == PLAYER


def is_heard(text: str) -> bool:
    return text.startswith(HEARD_HEADING)


def is_lore(text: str) -> bool:
    return text.startswith(LORE_HEADING)


def read_heard(text: str) -> list[Heard]:
    """The lines of an `npc.heard` entry, oldest first; lines it cannot read are skipped."""
    found: list[Heard] = []
    for line in text.splitlines()[1:]:
        item = _HEARD_LINE.match(line.strip())
        if item is None:
            continue
        who, said = item[1], item[2]
        to_player = _TO_PLAYER.match(who)
        if to_player is not None:
            found.append(Heard(PLAYER, said, tuple(to_player[1].split(" and "))))
        else:
            found.append(Heard(who, said))
    return found


def read_lore(text: str) -> list[str]:
    """The entries of an `npc.lore` entry, most relevant first."""
    return [line[len(_ITEM) :] for line in text.splitlines()[1:] if line.startswith(_ITEM)]


def read_answering(text: str) -> Answering | None:
    """The line another turned to this NPC with, or None for a player's own line."""
    found = _ANSWERING.match(text.strip())
    if found is None:
        return None
    # found[2], the NPC a player's line to several was for first, is not needed to answer it.
    return Answering(found[1], found[3])

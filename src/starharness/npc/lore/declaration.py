"""A game's lore as it declares it: entries, who may know each, and how much an NPC is given."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

EVERYONE: Final = ""
"""`LoreEntry.knower` of an entry every NPC may know."""

DEFAULT_STOPWORDS: Final = frozenset(
    (
        "a",
        "about",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "hello",
        "hi",
        "hey",
        "please",
        "tell",
        "know",
    )
)
"""Words too common to say what a player asks about (English; a game may give its own)."""

LoreScope = Literal["everyone", "faction", "npc"]


class LoreError(ValueError):
    """A lore declaration that cannot work, saying which entry and why."""


@dataclass(frozen=True, slots=True)
class LoreEntry:
    """One thing NPCs may know: its text, tags that say what it is about, and who may know it.

    At most one of `faction` and `npc`; neither: every NPC may know it.
    """

    id: str
    text: str
    tags: tuple[str, ...] = ()
    faction: str | None = None
    """Only NPCs of this faction (`Lore.factions`) may be given it."""
    npc: str | None = None
    """Only the NPC with this id may be given it."""

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise LoreError("a lore entry needs an id")
        if not self.text.strip():
            raise LoreError(f"lore entry {self.id!r} has no text")
        if self.faction is not None and self.npc is not None:
            raise LoreError(
                f"lore entry {self.id!r} names both a faction and an NPC; give one (or neither, "
                "for every NPC)"
            )
        for tag in self.tags:
            if not tag or any(c.isspace() for c in tag):
                raise LoreError(f"lore entry {self.id!r}: tag {tag!r} must be one word")

    @property
    def scope(self) -> LoreScope:
        if self.faction is not None:
            return "faction"
        return "npc" if self.npc is not None else "everyone"

    @property
    def knower(self) -> str:
        """Who may know it, as the index stores it: EVERYONE, `faction:NAME` or `npc:ID`."""
        if self.faction is not None:
            return faction_knower(self.faction)
        return EVERYONE if self.npc is None else npc_knower(self.npc)


def faction_knower(faction: str) -> str:
    return f"faction:{faction}"


def npc_knower(npc_id: str) -> str:
    return f"npc:{npc_id}"


def entry_from_row(entry_id: str, text: str, tags: str, knower: str) -> LoreEntry:
    """An entry read back from an index row (`knower` as `LoreEntry.knower` wrote it)."""
    kind, _, name = knower.partition(":")
    return LoreEntry(
        id=entry_id,
        text=text,
        tags=tuple(tags.split()),
        faction=name if kind == "faction" else None,
        npc=name if kind == "npc" else None,
    )


@dataclass(frozen=True, slots=True)
class LoreQuery:
    """One search: the words a player said, who asks (as knowers) and how many hits at most."""

    words: tuple[str, ...]
    knowers: tuple[str, ...]
    limit: int


@dataclass(frozen=True, eq=False)
class Lore:
    """A game's lore (`Game.lore`): each NPC turn gets the few entries that match what the
    player said best and that this NPC may know, within `budget`.

    The budget is in `measure`'s units: characters by default (`len`); a game that counts
    tokens passes its tokenizer's count. It bounds the whole lore block the model sees.
    """

    entries: Sequence[LoreEntry]
    factions: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    """Each NPC id's factions (an NPC not named here belongs to none)."""
    budget: int = 480
    """Small by default: a 1.5B model's whole context is a few thousand tokens."""
    max_entries: int = 3
    local_max_entries: int = 1
    """The most entries a turn gets when the model runs on this machine (a provider whose
    profile warms prefixes, such as `llama-cpp`): the model then reads every entry before the
    NPC's first word, about 25 tokens and 0.5-0.8 s each for the 1.5B development model on two
    cores."""
    measure: Callable[[str], int] = len
    stopwords: frozenset[str] = DEFAULT_STOPWORDS
    max_words: int = 12
    """The most words of a player's line searched for (the rest are dropped)."""

    def __post_init__(self) -> None:
        from .recall import render_lore  # the block's format lives with its reader

        if min(self.budget, self.max_entries, self.local_max_entries, self.max_words) < 1:
            raise LoreError(
                "budget, max_entries, local_max_entries and max_words must be at least 1"
            )
        seen: set[str] = set()
        members = {name for names in self.factions.values() for name in names}
        for entry in self.entries:
            if entry.id in seen:
                raise LoreError(f"two lore entries share the id {entry.id!r}")
            seen.add(entry.id)
            if entry.faction is not None and entry.faction not in members:
                raise LoreError(
                    f"lore entry {entry.id!r} is for faction {entry.faction!r}, which no NPC "
                    f"belongs to (factions: {sorted(members) or 'none'})"
                )
            size = self.measure(render_lore((entry,)))
            if size > self.budget:
                raise LoreError(
                    f"lore entry {entry.id!r} alone measures {size}, over the budget of "
                    f"{self.budget}: it could never be given; shorten it or raise the budget"
                )

    def knowers(self, npc_id: str) -> tuple[str, ...]:
        """Whose entries this NPC may be given: everyone's, its own, its factions'."""
        factions = self.factions.get(npc_id, ())
        return (EVERYONE, npc_knower(npc_id), *(faction_knower(f) for f in factions))

    def digest(self) -> str:
        """Changes whenever an entry does, so an index knows when to rebuild."""
        rows = [[e.id, e.text, " ".join(e.tags), e.knower] for e in self.entries]
        return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()

"""Each turn, the lore an NPC is given: searched with what the player said, cut to the budget,
and rendered into the turn's dynamic context (which the runtime logs before each request)."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Protocol, runtime_checkable

from ..world_calls import WorldCalls
from .declaration import Lore, LoreEntry, LoreQuery
from .index import MemoryLoreIndex
from .words import search_words

LORE_CONTEXT: Final = "npc.lore"
"""The dynamic context entry holding the turn's lore; after the scene, never in the static
prefix, so the cached prefix stays byte-stable."""
LORE_ORDER: Final = 1
LORE_HEADING: Final = "Lore you know (use it only if it helps):"
"""First line of the lore block; `lore_lines` finds the block in a logged context by it."""
_ITEM: Final = "- "
_CANDIDATES: Final = 4
"""Hits asked for per entry given, so entries too long for what is left can be passed over."""

_log = logging.getLogger("starharness.npc.lore")


@runtime_checkable
class SearchesLore(Protocol):
    """Optional on a world: it holds the game's lore in its own database and searches it
    there (`install_lore`/`search_lore` over its connection). A world without it gets an
    in-memory SQLite FTS5 index built from `Game.lore`."""

    def search_lore(self, query: LoreQuery) -> Sequence[LoreEntry]: ...


def render_lore(entries: Iterable[LoreEntry]) -> str:
    """The lore block the model reads; empty when there is nothing to give."""
    lines = [_ITEM + " ".join(entry.text.split()) for entry in entries]
    return "\n".join([LORE_HEADING, *lines]) if lines else ""


def lore_lines(context: str) -> list[str]:
    """The entries' texts in a logged dynamic context (for `inspect`); none when it has none."""
    start = context.find(LORE_HEADING + "\n")
    if start < 0:
        return []
    found: list[str] = []
    for line in context[start + len(LORE_HEADING) + 1 :].split("\n"):
        if not line.startswith(_ITEM):
            break
        found.append(line[len(_ITEM) :])
    return found


def within_budget(
    lore: Lore, hits: Iterable[LoreEntry], most: int | None = None
) -> tuple[LoreEntry, ...]:
    """The best hits, in order, whose block fits the budget, at most `most` (default:
    `lore.max_entries`): one too long for what is left is passed over for a shorter one after
    it."""
    limit = lore.max_entries if most is None else most
    chosen: list[LoreEntry] = []
    for entry in hits:
        if len(chosen) >= limit:
            break
        if lore.measure(render_lore((*chosen, entry))) <= lore.budget:
            chosen.append(entry)
    return tuple(chosen)


def query_for(lore: Lore, npc_id: str, said: str) -> LoreQuery | None:
    """What to search for after the player said `said` to the NPC; None: nothing to search."""
    words = search_words(said, lore.stopwords, lore.max_words)
    if not words:
        return None
    return LoreQuery(words, lore.knowers(npc_id), lore.max_entries * _CANDIDATES)


def recall(
    lore: Lore,
    search: Callable[[LoreQuery], Sequence[LoreEntry]],
    npc_id: str,
    said: str,
    most: int | None = None,
) -> tuple[LoreEntry, ...]:
    """The entries the NPC is given this turn, at most `most` (default: `lore.max_entries`).
    Blocks: run it where world calls run."""
    query = query_for(lore, npc_id, said)
    if query is None:
        return ()
    allowed = set(query.knowers)
    # The index filters by knower already; this check keeps a world's own index honest.
    return within_budget(lore, (e for e in search(query) if e.knower in allowed), most)


_MEMORY: weakref.WeakKeyDictionary[Lore, MemoryLoreIndex] = weakref.WeakKeyDictionary()
_MEMORY_LOCK = threading.Lock()


def lore_search(lore: Lore, world: object) -> Callable[[LoreQuery], Sequence[LoreEntry]]:
    """The world's own search (`SearchesLore`), else a shared in-memory index of `lore`."""
    own: Callable[[LoreQuery], Sequence[LoreEntry]] | None = getattr(world, "search_lore", None)
    if own is not None:
        return own
    with _MEMORY_LOCK:
        index = _MEMORY.get(lore)
        if index is None:
            index = _MEMORY[lore] = MemoryLoreIndex(lore)
    return index.search


class LoreRecall:
    """One encounter's lore: what the player's last line retrieved and the NPC was not given
    before in this encounter. What it was given is already in its history; giving it again
    would only make a model server evaluate it again.

    Given as the turn's dynamic context (`context`), or, with `after_decision`, only when the
    turn's decision is to only talk (`take`, the decision tool's talk context): an entry not
    given then can be given on a later turn."""

    __slots__ = (
        "_entries",
        "_given",
        "_lore",
        "_most",
        "_npc_id",
        "_search",
        "after_decision",
        "text",
    )

    def __init__(
        self,
        lore: Lore | None,
        world: object,
        npc_id: str,
        *,
        local: bool = False,
        after_decision: bool = False,
    ) -> None:
        """`local`: the model runs on this machine, so a turn gets at most
        `lore.local_max_entries` entries. `after_decision`: the turn's lore is given through
        `take` instead of `context`."""
        self._lore = lore
        self._most = None if lore is None or not local else lore.local_max_entries
        self._npc_id = npc_id
        self._search = None if lore is None else lore_search(lore, world)
        self.after_decision = after_decision
        self._given: set[str] = set()
        self._entries: tuple[LoreEntry, ...] = ()
        self.text = ""

    async def read(self, calls: WorldCalls, said: str) -> None:
        """Search for what the player said; a failing search gives no lore, never ends the
        turn."""
        lore, search = self._lore, self._search
        if lore is None or search is None:
            return
        try:
            found = await calls.run(recall, lore, search, self._npc_id, said, self._most)
        except Exception:
            _log.exception("lore search for %s failed; this turn has no lore", self._npc_id)
            found = ()
        self._entries = tuple(entry for entry in found if entry.id not in self._given)
        self.text = render_lore(self._entries)
        if not self.after_decision:
            self._given.update(entry.id for entry in self._entries)

    def context(self, _ctx: object) -> str:
        return self.text

    def take(self, *, give: bool) -> str:
        """The turn's lore block, once (then "" until the next `read`); with `give` false it
        is dropped and its entries stay ungiven."""
        text, entries = self.text, self._entries
        self.text, self._entries = "", ()
        if not give:
            return ""
        self._given.update(entry.id for entry in entries)
        return text

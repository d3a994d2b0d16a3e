"""What the framework reads from a game's world, and how actions write to it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NpcCard:
    """An NPC as the framework sees it."""

    id: str
    name: str
    persona: str
    archetype: str
    alive: bool
    location_id: str


@dataclass(frozen=True, slots=True)
class Meeting:
    """What an open reads: the NPC's card, whether the player may meet it now, its attitude."""

    npc: NpcCard
    can_meet: bool
    attitude: int


@dataclass(frozen=True, slots=True)
class NewsItem:
    """Something that happened in the world, for the clients' news and later scenes."""

    location_id: str
    headline: str


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One attempted action, accepted or refused."""

    action: str
    actor_id: str
    target_id: str | None
    arguments: Mapping[str, Any]
    ok: bool
    reason: str | None
    summary: str | None


@runtime_checkable
class GameWorld(Protocol):
    """The read side of a game's world."""

    def npc(self, npc_id: str) -> NpcCard | None:
        """The NPC's card, or None when there is no such NPC."""
        ...

    def npcs(self) -> Sequence[NpcCard]:
        """Every NPC, for the `welcome` frame."""
        ...

    def has_player(self, player_id: str) -> bool: ...

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        """Whether the player can talk to the NPC now (same place, say). An open asks
        `has_player` first, so this need not check that the player exists."""
        ...

    def player_view(self, player_id: str) -> Mapping[str, Any]:
        """The game-defined HUD data for the player (JSON-able)."""
        ...

    def scene(self, npc_id: str, player_id: str) -> str:
        """The scene as the NPC sees it now, memories included, rendered as text."""
        ...

    def attitude(self, npc_id: str, player_id: str) -> int: ...

    def tick(self, days: int) -> Sequence[NewsItem]:
        """Advance the clock; returns what happened."""
        ...


@runtime_checkable
class ActionHost(Protocol):
    """The write side: one transaction per action, and an audit sink."""

    def transaction(self) -> AbstractContextManager[Any]:
        """`BEGIN IMMEDIATE` ... commit; an exception inside rolls back every write."""
        ...

    def run_action(self, work: Callable[[Any], T]) -> T:
        """Run `work(tx)` in one write transaction and return its result.

        A world whose transactions can conflict (PostgreSQL SERIALIZABLE) rolls back and runs
        all of `work` again, a bounded number of times, then raises; a world without conflicts
        (SQLite) runs it once: `with self.transaction() as tx: return work(tx)`. `work` must
        have no effects outside the transaction, since it may run more than once.
        """
        ...

    def is_alive(self, tx: Any, actor_id: str) -> bool:
        """Read inside the action's transaction, so a death cannot slip in between."""
        ...

    def audit(self, tx: Any | None, record: AuditRecord) -> None:
        """Store an audit row inside `tx`, or in a transaction of its own when `tx` is None."""
        ...


class World(GameWorld, ActionHost, Protocol):
    """A game world that both reads and hosts actions."""


@runtime_checkable
class ReadsTogether(Protocol):
    """Optional on a world: several `GameWorld` reads from one consistent state."""

    def reading(self) -> AbstractContextManager[object]:
        """Inside, the world's reads on this thread share one read transaction (cheaper on
        SQLite than a lock per statement); it never writes, and nests inside itself."""
        ...


@runtime_checkable
class ReadsMeetings(Protocol):
    """Optional on a world: everything an encounter's open reads, in one consistent read."""

    def meeting(self, npc_id: str, player_id: str) -> Meeting | None:
        """None when there is no such NPC; else its card, whether `player_id` is a player who
        may meet it now (false for anyone else, an NPC's id included) and its attitude, read
        from one state (one statement, say: an open then needs no read transaction)."""
        ...


@runtime_checkable
class SharesSceneOpening(Protocol):
    """Optional on a world: the text every player's scene with an NPC begins with."""

    def scene_opening(self, npc_id: str) -> str:
        """What `scene(npc_id, player_id)` begins with now whoever the player is, followed
        there by a newline and the player's part ("" when no line is shared). A caching model
        server evaluates it with the NPC's prefix before anyone meets the NPC, so a greeting
        evaluates only the player's part of its scene."""
        ...


def scene_opening(world: object, npc_id: str) -> str:
    """The world's `scene_opening(npc_id)` where it has one (`SharesSceneOpening`), else ""."""
    opening: Callable[[str], str] | None = getattr(world, "scene_opening", None)
    return "" if opening is None else opening(npc_id)


def reading_together(world: object) -> AbstractContextManager[object]:
    """The world's `reading()` where it has one (`ReadsTogether`), else nothing."""
    # getattr, not isinstance: a runtime protocol check costs more than the reads it saves.
    reading: Callable[[], AbstractContextManager[object]] | None = getattr(world, "reading", None)
    return nullcontext() if reading is None else reading()


def waits_on_network(world: object) -> bool:
    """Whether the world says its calls wait on a network (a `blocks_on_network` attribute that
    is true, as a world kept in a database server would set): it is then called in threads of
    its own."""
    return bool(getattr(world, "blocks_on_network", False))


def calls_inline(game_inline: bool, world: object) -> bool:
    """Whether world calls may run on the event loop: the game says they are short
    (`Game.world_calls_inline`) and the world does not wait on a network (`waits_on_network`)."""
    return game_inline and not waits_on_network(world)

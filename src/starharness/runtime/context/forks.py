"""Forks: a child session seeded with a parent's completed-turn prefix (immutable), the
boundary kept as `seed_length` in its meta, so a crash resumes it from storage alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..errors import StarHarnessError
from ..kernel import Context
from ..loop import AGENTS
from ..session import SESSIONS, Session, SessionEvent
from ..session import event_types as ev

if TYPE_CHECKING:
    from ..loop import AgentHandle, AgentOptions
    from ..loop.manager import Setup

PARENT_SESSION: Final = "parent_session"
SEED_LENGTH: Final = "seed_length"
ORIGIN: Final = "origin"
DELEGATION_DEPTH: Final = "delegation_depth"


class ForkError(StarHarnessError, ValueError):
    """A fork boundary that is not the end of a completed turn, or a seed that no longer
    matches its parent."""


def completed_prefix(session: Session) -> int:
    """The length of the session's log up to and including its last turn/end."""
    events = session.events
    for index in range(len(events) - 1, -1, -1):
        if events[index].type == ev.TURN_END:
            return index + 1
    return 0


def check_boundary(session: Session, boundary: int) -> None:
    events = session.events
    if boundary < 0 or boundary > len(events):
        raise ForkError(f"fork boundary {boundary} is outside session {session.id!r}")
    if boundary and events[boundary - 1].type != ev.TURN_END:
        raise ForkError(
            f"fork boundary {boundary} of session {session.id!r} is not the end of a completed"
            f" turn (event {boundary - 1} is {events[boundary - 1].type})"
        )


def fork_meta(parent: Session, boundary: int, origin: str, depth: int) -> dict[str, Any]:
    return {
        PARENT_SESSION: parent.id,
        SEED_LENGTH: boundary,
        ORIGIN: origin,
        DELEGATION_DEPTH: depth,
    }


async def fork(
    ctx: Context,
    parent: Session,
    child_id: str,
    *,
    boundary: int | None = None,
    setup: Setup | None = None,
    options: AgentOptions | None = None,
    origin: str = "fork",
    depth: int = 1,
) -> AgentHandle:
    """A new agent whose session starts with `parent`'s events up to `boundary` (default: its
    last completed turn); its own events follow and never change the parent."""
    seed_length = completed_prefix(parent) if boundary is None else boundary
    check_boundary(parent, seed_length)
    seed: tuple[SessionEvent, ...] = tuple(parent.events[:seed_length])
    return await ctx.get(AGENTS).create(
        child_id,
        setup=setup,
        options=options,
        meta=fork_meta(parent, seed_length, origin, depth),
        seed=seed,
    )


def seed_of(meta: Mapping[str, Any]) -> tuple[str, int] | None:
    """(parent session id, seed length) of a forked session's meta, or None."""
    parent = meta.get(PARENT_SESSION)
    length = meta.get(SEED_LENGTH)
    if isinstance(parent, str) and isinstance(length, int):
        return parent, length
    return None


async def verify_seed(ctx: Context, child: Session) -> None:
    """Check a (resumed) fork's inherited prefix against its parent's stored log."""
    found = seed_of(child.meta)
    if found is None:
        raise ForkError(f"session {child.id!r} is not a fork")
    parent_id, length = found
    live = ctx.get(SESSIONS).get(parent_id)
    if live is not None:
        parent_events = list(live.events[:length])
    else:
        stored = await ctx.get(SESSIONS).store.load(parent_id)
        if stored is None:
            raise ForkError(f"fork {child.id!r}: its parent {parent_id!r} is not in the store")
        parent_events = stored.events[:length]
    if list(child.events[:length]) != parent_events:
        raise ForkError(f"fork {child.id!r}: its seed differs from its parent's first {length}")

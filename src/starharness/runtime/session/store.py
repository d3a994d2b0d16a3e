"""What a session store does, and what it hands back."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .events import SessionEvent


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as loaded from a store; `dropped` counts torn-tail events removed while loading."""

    id: str
    created_at: int
    meta: Mapping[str, Any]
    events: list[SessionEvent]
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A stored session's summary (for listings and retention)."""

    id: str
    created_at: int
    updated_at: int
    meta: Mapping[str, Any]


class SessionStore(Protocol):
    """Keeps session logs. Writes are queued (sync, O(1)); `flush` makes them durable."""

    def exists(self, session_id: str) -> bool:
        """Whether the store holds this session (written or queued)."""
        ...

    def create(self, session_id: str, created_at: int, meta: Mapping[str, Any]) -> None:
        """Queue the creation of an empty session."""
        ...

    def append(self, session_id: str, event: SessionEvent) -> None:
        """Queue one event of a created session."""
        ...

    def delete(self, session_id: str) -> None:
        """Queue the removal of a session and its events."""
        ...

    def prune(self, keep: int, protect: Collection[str]) -> None:
        """Queue removal of all but the `keep` most recently active sessions, sparing `protect`."""
        ...

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored session (torn tail dropped), or None if there is none."""
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recently active first."""
        ...

    def write_soon(self) -> None:
        """Have what is queued written without the usual batching delay (does not wait)."""
        ...

    async def flush(self) -> None:
        """Wait until everything queued so far is written."""
        ...

    async def aclose(self) -> None:
        """Flush, then release the store; later writes raise StoreClosedError."""
        ...

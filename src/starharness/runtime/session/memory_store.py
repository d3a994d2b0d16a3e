"""A session store that keeps everything in memory (tests, throwaway runs)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import StoreClosedError, StoreError
from .events import SessionEvent
from .store import SessionInfo, StoredSession


@dataclass(slots=True)
class _Entry:
    created_at: int
    updated_at: int
    meta: Mapping[str, Any]
    events: list[SessionEvent] = field(default_factory=list[SessionEvent])


class MemoryStore:
    """Same contract as SqliteStore, nothing persisted; events are shared, never copied."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Entry] = {}
        self._closed = False

    def _open(self) -> dict[str, _Entry]:
        if self._closed:
            raise StoreClosedError("the memory session store is closed")
        return self._sessions

    def exists(self, session_id: str) -> bool:
        return session_id in self._open()

    def create(self, session_id: str, created_at: int, meta: Mapping[str, Any]) -> None:
        sessions = self._open()
        if session_id in sessions:
            raise StoreError(f"session {session_id!r} is already stored")
        sessions[session_id] = _Entry(created_at, created_at, meta)

    def append(self, session_id: str, event: SessionEvent) -> None:
        if self._closed:
            self._open()
        entry = self._sessions.get(session_id)
        if entry is None:
            raise StoreError(f"cannot append to session {session_id!r}: it was never created")
        if event.seq != len(entry.events):
            raise StoreError(
                f"session {session_id!r}: event seq {event.seq} does not follow"
                f" {len(entry.events) - 1}"
            )
        entry.events.append(event)
        entry.updated_at = event.time

    def delete(self, session_id: str) -> None:
        self._open().pop(session_id, None)

    def prune(self, keep: int, protect: Collection[str]) -> None:
        sessions = self._open()
        # Insertion order breaks ties in activity time, so the newest of equals survives.
        ranked = sorted(
            enumerate(sessions.items()),
            key=lambda item: (item[1][1].updated_at, item[0]),
            reverse=True,
        )
        for _, (session_id, _entry) in ranked[keep:]:
            if session_id not in protect:
                del sessions[session_id]

    async def load(self, session_id: str) -> StoredSession | None:
        entry = self._open().get(session_id)
        if entry is None:
            return None
        return StoredSession(session_id, entry.created_at, entry.meta, list(entry.events))

    async def list_sessions(self) -> list[SessionInfo]:
        infos = [
            SessionInfo(session_id, entry.created_at, entry.updated_at, entry.meta)
            for session_id, entry in self._open().items()
        ]
        infos.reverse()
        infos.sort(key=lambda info: info.updated_at, reverse=True)
        return infos

    def write_soon(self) -> None:
        self._open()

    async def flush(self) -> None:
        self._open()

    async def aclose(self) -> None:
        self._closed = True

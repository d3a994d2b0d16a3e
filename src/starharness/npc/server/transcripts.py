"""Retention of encounter transcripts in the runtime's session store."""

from __future__ import annotations

from collections import deque

from ...runtime.session import SessionService
from ..encounter import TRANSCRIPT_KIND


class TranscriptKeeper:
    """Keeps the newest `keep` finished logs of one kind (None: all; 0: none), deletes the rest.

    The kind is `meta.kind`: encounters by default, a resident's turns with their own keeper.
    """

    __slots__ = ("_ids", "_keep", "_kind", "_sessions")

    def __init__(
        self, sessions: SessionService, keep: int | None, kind: str = TRANSCRIPT_KIND
    ) -> None:
        self._sessions = sessions
        self._keep = keep
        self._kind = kind
        self._ids: deque[str] = deque()

    async def load(self) -> None:
        """Adopt the transcripts already stored (oldest first) and prune them to `keep`."""
        if not self._keep:
            return
        stored = await self._sessions.stored()
        ids = [info.id for info in stored if info.meta.get("kind") == self._kind]
        self._ids.extend(reversed(ids))
        self._prune()

    def ended(self, session_id: str) -> None:
        """A kept agent was disposed (its session is closed)."""
        if self._keep is None:
            return
        if self._keep == 0:
            self._sessions.store.delete(session_id)
            return
        self._ids.append(session_id)
        self._prune()

    def _prune(self) -> None:
        keep = self._keep or 0
        while len(self._ids) > keep:
            self._sessions.store.delete(self._ids.popleft())

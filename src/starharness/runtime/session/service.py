"""The sessions service (`ctx.get(SESSIONS)`): creates, resumes and closes sessions over a store."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ..kernel import Disposer, once
from .errors import SessionExistsError, SessionNotFoundError
from .events import SessionEvent
from .memory_store import MemoryStore
from .recovery import close_interrupted_turn
from .session import Clock, Session, epoch_ms
from .store import SessionInfo, SessionStore

_log = logging.getLogger("starharness.runtime.session")

ServiceListener = Callable[[Session, SessionEvent], None]
Recovery = Callable[[Session], object]
"""Brings a resumed session's log back to a consistent state (appends what closes a unit a
crash cut short); runs before the interrupted turn is closed."""


class SessionService:
    """Live sessions by id, persisted through one store.

    Retention: `keep_sessions` keeps only that many stored sessions (the most recently active;
    open ones are never removed); `delete_on_close` removes a session from the store when closed.
    """

    def __init__(
        self,
        store: SessionStore | None = None,
        *,
        keep_sessions: int | None = None,
        delete_on_close: bool = False,
        clock: Clock = epoch_ms,
    ) -> None:
        if keep_sessions is not None and keep_sessions < 0:
            raise ValueError(f"keep_sessions must be >= 0, got {keep_sessions}")
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.keep_sessions = keep_sessions
        self.delete_on_close = delete_on_close
        self._clock = clock
        self._live: dict[str, Session] = {}
        self._listeners: list[ServiceListener] = []
        # Live sessions forward their events here only while someone listens to the service.
        self._forwarding: dict[str, Disposer] = {}
        self._recoveries: list[Recovery] = []

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._live

    def live(self) -> list[Session]:
        """Sessions open in this process."""
        return list(self._live.values())

    def get(self, session_id: str) -> Session | None:
        """The open session with this id, or None."""
        return self._live.get(session_id)

    def create(
        self,
        session_id: str,
        meta: Mapping[str, Any] | None = None,
        *,
        seed: Sequence[SessionEvent] = (),
    ) -> Session:
        """Start a new session, empty or holding `seed` (a fork's inherited prefix, written to
        the store with it); raises SessionExistsError if the id is taken."""
        _check_id(session_id)
        if session_id in self._live or self.store.exists(session_id):
            raise SessionExistsError(f"session {session_id!r} already exists; resume it instead")
        session = Session(
            session_id, seed, meta=meta, clock=self._clock, sink=self._sink(session_id)
        )
        self.store.create(session_id, session.created_at, session.meta)
        for event in seed:
            self.store.append(session_id, event)
        self._adopt(session)
        self._apply_retention()
        return session

    async def resume(self, session_id: str) -> Session:
        """The open session with this id, else load it from the store and close a turn a crash
        interrupted; raises SessionNotFoundError when there is none."""
        _check_id(session_id)
        live = self._live.get(session_id)
        if live is not None:
            return live
        stored = await self.store.load(session_id)
        # Another resume may have won while this one was loading.
        live = self._live.get(session_id)
        if live is not None:
            return live
        if stored is None:
            raise SessionNotFoundError(f"no session {session_id!r} in the store")
        if stored.dropped:
            _log.warning(
                "session %r: dropped %d torn event(s) at the end of its log",
                session_id,
                stored.dropped,
            )
        session = Session(
            session_id,
            stored.events,
            meta=stored.meta,
            created_at=stored.created_at,
            clock=self._clock,
            sink=self._sink(session_id),
        )
        self._adopt(session)
        for recovery in tuple(self._recoveries):
            recovery(session)
        close_interrupted_turn(session)
        return session

    def add_recovery(self, recovery: Recovery) -> Disposer:
        """Run `recovery` on every session resumed from the store from now on."""
        self._recoveries.append(recovery)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._recoveries.remove(recovery)

        return once(remove)

    def close(self, session_id: str) -> None:
        """Forget a session and have its queued events written now (without waiting: await
        `flush()` for that); removes it from the store if `delete_on_close` is set."""
        session = self._live.pop(session_id, None)
        if session is None:
            return
        self._forwarding.pop(session_id, None)
        session.close()
        if self.delete_on_close:
            self.store.delete(session_id)
        self._apply_retention()
        self.store.write_soon()

    async def flush(self) -> None:
        """Wait until every event appended so far is written."""
        await self.store.flush()

    async def stored(self) -> list[SessionInfo]:
        """Sessions in the store, most recently active first."""
        return await self.store.list_sessions()

    def subscribe(self, listener: ServiceListener) -> Disposer:
        """Call `listener(session, event)` for every event of every session of this service."""
        listeners = self._listeners
        listeners.append(listener)
        if len(listeners) == 1:
            for session in self._live.values():
                self._forward(session)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                listeners.remove(listener)
            if not listeners:
                for stop in self._forwarding.values():
                    stop()
                self._forwarding.clear()

        return once(remove)

    async def aclose(self) -> None:
        """Close every session, flush and close the store."""
        for session in list(self._live.values()):
            session.close()
        self._live.clear()
        self._forwarding.clear()
        await self.store.aclose()

    def _sink(self, session_id: str) -> Callable[[SessionEvent], None]:
        return partial(self.store.append, session_id)

    def _adopt(self, session: Session) -> None:
        self._live[session.id] = session
        if self._listeners:
            self._forward(session)

    def _forward(self, session: Session) -> None:
        self._forwarding[session.id] = session.subscribe(partial(self._notify, session))

    def _notify(self, session: Session, event: SessionEvent) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(session, event)
            except Exception:
                _log.exception("session listener failed on %s of %r", event.type, session.id)

    def _apply_retention(self) -> None:
        if self.keep_sessions is not None:
            self.store.prune(self.keep_sessions, frozenset(self._live))


def _check_id(session_id: str) -> None:
    if not isinstance(session_id, str) or not session_id:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f"a session id must be a non-empty string, got {session_id!r}")

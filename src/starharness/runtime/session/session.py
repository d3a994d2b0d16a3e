"""A session: an append-only event log with listeners and the model's history projected from it."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

from ..kernel import Disposer, once
from ..llm.types import Message
from .errors import SessionClosedError
from .event_types import REQUEST_HEADER
from .events import (
    EMPTY,
    SessionDataError,
    SessionEvent,
    freeze_data,
    freeze_event_data,
    new_event,
)
from .kinds import EventKind
from .projection import MODEL_VISIBLE, Projection, check_model_visible

_log = logging.getLogger("starharness.runtime.session")

D = TypeVar("D", bound=Mapping[str, Any])

EventListener = Callable[[SessionEvent], None]
EventSink = Callable[[SessionEvent], None]
Clock = Callable[[], int]


def epoch_ms() -> int:
    """Wall-clock time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


class EventView(Sequence[SessionEvent]):
    """A read-only window on a session's events (no copy)."""

    __slots__ = ("_events",)

    def __init__(self, events: list[SessionEvent]) -> None:
        self._events = events

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        if isinstance(index, slice):
            return tuple(self._events[index])
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventView):
            return self._events == other._events
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a live view of a growing log

    def __repr__(self) -> str:
        return f"EventView({len(self._events)} events)"


class Session:
    """An append-only log of SessionEvents; `seq` is each event's index.

    `append` is synchronous and O(1): it freezes the data, notifies listeners and hands the event
    to the sink (the store's batched writer).
    """

    __slots__ = (
        "_clock",
        "_closed",
        "_events",
        "_header",
        "_listeners",
        "_projection",
        "_sink",
        "_view",
        "created_at",
        "id",
        "meta",
    )

    def __init__(
        self,
        session_id: str,
        events: Iterable[SessionEvent] = (),
        *,
        meta: Mapping[str, Any] | None = None,
        created_at: int | None = None,
        sink: EventSink | None = None,
        clock: Clock = epoch_ms,
    ) -> None:
        self.id = session_id
        self.meta = freeze_data(meta, where="meta") if meta else EMPTY
        self._clock = clock
        self.created_at = created_at if created_at is not None else clock()
        self._events: list[SessionEvent] = list(events)
        self._view = EventView(self._events)
        self._header: Mapping[str, Any] | None = None
        if self._events:  # a new session (every encounter's) has nothing to check
            self._check_loaded()
        # A tuple replaced on every change, so a listener may unsubscribe while being called.
        self._listeners: tuple[EventListener, ...] = ()
        self._projection = Projection()
        self._sink = sink
        self._closed = False

    def _check_loaded(self) -> None:
        """Events in seq order from 0; the newest request header is remembered."""
        for index, event in enumerate(self._events):
            if event.seq != index:
                raise SessionDataError(
                    f"session {self.id!r}: event at index {index} has seq {event.seq}"
                )
        for event in reversed(self._events):
            if event.type == REQUEST_HEADER:
                self._header = event.data
                break

    def __repr__(self) -> str:
        return f"Session({self.id!r}, {len(self._events)} events)"

    @property
    def events(self) -> Sequence[SessionEvent]:
        """Every event so far, oldest first (a live read-only view)."""
        return self._view

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, type: str, data: Mapping[str, Any] | None = None) -> SessionEvent:
        """Log one event; its data is deep-copied and frozen (later changes to it are not seen).

        Parts that were frozen before (another event's data, say) are shared, not copied.
        """
        if self._closed:
            raise SessionClosedError(f"session {self.id!r} is closed; cannot append {type!r}")
        if not isinstance(type, str) or not type:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SessionDataError(f"event type must be a non-empty string, got {type!r}")
        frozen = freeze_event_data(type, data) if data else EMPTY
        if type in MODEL_VISIBLE:
            check_model_visible(type, frozen, len(self._events))
        events = self._events
        event = new_event(len(events), self._clock(), type, frozen)
        sink = self._sink
        if sink is not None:
            # Before the in-memory append: if the store refuses, the log stays as it was.
            sink(event)
        events.append(event)
        if type == REQUEST_HEADER:
            self._header = frozen
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                _log.exception("listener of session %r failed on %s", self.id, type)
        return event

    def log(self, kind: EventKind[D], data: D) -> SessionEvent:
        """`append` of a declared event type, with data of its TypedDict (checked by pyright)."""
        return self.append(kind.name, data)

    def subscribe(self, listener: EventListener) -> Disposer:
        """Call `listener` synchronously with every event appended from now on."""
        self._listeners = (*self._listeners, listener)

        def remove() -> None:
            listeners = list(self._listeners)
            with contextlib.suppress(ValueError):
                listeners.remove(listener)
                self._listeners = tuple(listeners)

        return once(remove)

    def messages(self) -> Sequence[Message]:
        """The model-visible history; only events new since the last call are processed.

        The same list object is returned every time and grows in place.
        """
        return self._projection.feed(self._events)

    def view_keys(self) -> Sequence[int]:
        """Each message's key in `messages()` (the seq a replace names it by); brought up to
        date like `messages()`."""
        projection = self._projection
        projection.feed(self._events)
        return projection.keys

    @property
    def projection_examined(self) -> int:
        """How many events the projection has processed in total (each one once)."""
        return self._projection.examined

    def header(self) -> Mapping[str, Any] | None:
        """Data of the last request/header event, or None."""
        return self._header

    def close(self) -> None:
        """Refuse further appends and drop listeners (the service calls this when closing)."""
        self._closed = True
        self._listeners = ()

"""Typed events with four dispatch modes: emit, serial, bail and waterfall (no `parallel`: see
docs/runtime.md, "Why there is no parallel dispatch")."""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from .effects import Disposer

_log = logging.getLogger("starharness.runtime.events")

T = TypeVar("T")
R = TypeVar("R")


class Event(Generic[T]):
    """A named, typed event. Listeners are plain callables observing a payload of type T."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Event({self.name!r})"


class Hook(Generic[T, R]):
    """A named async hook whose listeners take T and may answer R (serial and bail modes)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Hook({self.name!r})"


class Waterfall(Generic[T]):
    """A named chain: each listener gets the value and `next`; not calling `next` vetoes."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Waterfall({self.name!r})"


Listener = Callable[[T], None]
HookListener = Callable[[T], Awaitable[R | None]]
Next = Callable[[T], Awaitable[T | None]]
WaterfallListener = Callable[[T, Next[T]], Awaitable[T | None]]


class _Removal:
    """Takes one listener out of its bucket, once (a small object: one per registration)."""

    __slots__ = ("_bucket", "_fn")

    def __init__(self, bucket: list[Any], fn: object) -> None:
        self._bucket: list[Any] | None = bucket
        self._fn = fn

    def __call__(self) -> None:
        bucket, self._bucket = self._bucket, None
        if bucket is not None:
            with contextlib.suppress(ValueError):
                bucket.remove(self._fn)


def _is_async(listener: object) -> bool:
    call = getattr(listener, "__call__", None)  # noqa: B004 (an object with async __call__)
    return inspect.iscoroutinefunction(listener) or inspect.iscoroutinefunction(call)


def _name(listener: object) -> str:
    return getattr(listener, "__qualname__", None) or repr(listener)


class EventBus:
    """Registers listeners (each registration returns a disposer) and dispatches to them."""

    __slots__ = ("_listeners", "_parent")

    def __init__(self, parent: EventBus | None = None) -> None:
        # A child bus (an agent's) sees its own listeners first, then its ancestors'.
        self._parent = parent
        self._listeners: dict[str, list[Any]] = {}

    def _add(self, name: str, fn: object) -> Disposer:
        bucket = self._listeners.setdefault(name, [])
        bucket.append(fn)
        return _Removal(bucket, fn)

    def _chain(self, name: str) -> list[Any]:
        """A new list of the listeners for `name`: this bus's, then its ancestors'."""
        found: list[Any] = []
        bus: EventBus | None = self
        while bus is not None:
            own = bus._listeners.get(name)
            if own:
                found += own
            bus = bus._parent
        return found

    def has_listeners(self, event: Event[Any] | Hook[Any, Any] | Waterfall[Any]) -> bool:
        # Walked, not chained: every agent asks once, and a chain builds a list per bus.
        name = event.name
        bus: EventBus | None = self
        while bus is not None:
            if bus._listeners.get(name):
                return True
            bus = bus._parent
        return False

    def on(self, event: Event[T], listener: Listener[T]) -> Disposer:
        """Listen to `event`; an async listener is refused (emit never awaits)."""
        if _is_async(listener):
            raise TypeError(
                f"the listener {_name(listener)} of {event!r} is async, and emit never awaits "
                "its listeners (it would never run); listen to a Hook with on_hook instead, or "
                "start the work in a task that something owns and awaits"
            )
        return self._add(event.name, listener)

    def on_hook(self, hook: Hook[T, R], listener: HookListener[T, R]) -> Disposer:
        return self._add(hook.name, listener)

    def on_waterfall(self, hook: Waterfall[T], listener: WaterfallListener[T]) -> Disposer:
        return self._add(hook.name, listener)

    def emit(self, event: Event[T], payload: T) -> None:
        """Call every listener; one that raises is logged and does not starve the others.
        Never awaits: `on` refuses an async listener, and an awaitable a listener returns is
        closed unrun and logged."""
        own = self._listeners.get(event.name)
        # A copy either way: a listener may unsubscribe while being called.
        listeners = self._chain(event.name) if self._parent is not None or not own else [*own]
        if not listeners:
            return
        for listener in listeners:
            try:
                answer: object = listener(payload)
            except Exception:
                _log.exception("listener of %s failed", event.name)
                continue
            if answer is not None and inspect.isawaitable(answer):
                # Got past `on` (a plain function that returns a coroutine): never run it.
                if inspect.iscoroutine(answer):
                    answer.close()
                _log.error(
                    "listener %s of %s returned an awaitable; emit does not await, so it did "
                    "not run (listen to a Hook instead)",
                    _name(listener),
                    event.name,
                )

    async def serial(self, hook: Hook[T, R], payload: T) -> None:
        """Await every listener in order; an exception propagates to the caller."""
        for listener in self._chain(hook.name):
            await listener(payload)

    async def bail(self, hook: Hook[T, R], payload: T) -> R | None:
        """Await listeners in order and return the first answer that is not None."""
        for listener in self._chain(hook.name):
            answer = await listener(payload)
            if answer is not None:
                return answer
        return None

    async def waterfall(self, hook: Waterfall[T], value: T) -> T | None:
        """Pass `value` down the chain; returns the final value, or None when a listener vetoed."""
        listeners = self._chain(hook.name)
        if not listeners:
            return value

        async def step(index: int, current: T) -> T | None:
            if index == len(listeners):
                return current

            async def next_(changed: T) -> T | None:
                return await step(index + 1, changed)

            listener: WaterfallListener[T] = listeners[index]
            return await listener(current, next_)

        return await step(0, value)

"""Reversible effects: every registration returns a disposer, and a scope undoes them in reverse."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator

from ..errors import StarHarnessError

_log = logging.getLogger("starharness.runtime.kernel")

Disposer = Callable[[], None]
"""Undo one registration. Calling it twice is harmless."""

AsyncCleanup = Callable[[], Awaitable[None] | None]


def once(fn: Callable[[], None]) -> Disposer:
    """Wrap `fn` so that only its first call has an effect."""
    done = False

    def dispose() -> None:
        nonlocal done
        if not done:
            done = True
            fn()

    return dispose


class ScopeDisposedError(StarHarnessError, RuntimeError):
    """Raised when something registers on a scope that was already disposed."""


class Scope:
    """An owner of effects: what is registered through it is undone, newest first, on close."""

    __slots__ = ("_cleanups", "_closed", "_next_key", "_owner", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        # Keyed so that a disposer forgets its cleanup in O(1); dicts keep insertion order,
        # and popitem() takes the newest.
        self._cleanups: dict[int, AsyncCleanup] = {}
        self._next_key = 0
        self._closed = False
        self._owner: tuple[Scope, int] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        """How many effects this scope still owns."""
        return len(self._cleanups)

    def add(self, cleanup: AsyncCleanup) -> Disposer:
        """Own `cleanup`; the returned disposer runs it early and forgets it."""
        return _Dispose(self, self._register(cleanup))

    def adopt(self, child: Scope) -> None:
        """Close `child` with this scope; a child that closes first is forgotten here."""
        if child._closed:
            raise ScopeDisposedError(f"scope {child.name!r} is already disposed")
        if child._owner is not None:
            raise ValueError(f"scope {child.name!r} already has an owner")
        child._owner = (self, self._register(child.aclose))

    async def aclose(self) -> None:
        """Undo everything in reverse order; a failing cleanup is logged and the rest still run."""
        for cleanup in self._close_and_take():
            try:
                result = cleanup()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                _log.exception("cleanup failed while disposing scope %r", self.name)

    def _close_and_take(self) -> Iterator[AsyncCleanup]:
        """Mark this scope closed (once) and hand out its cleanups, newest first."""
        if self._closed:
            return
        self._closed = True
        self._leave_owner()
        while self._cleanups:
            yield self._cleanups.popitem()[1]

    def _register(self, cleanup: AsyncCleanup) -> int:
        if self._closed:
            raise ScopeDisposedError(f"scope {self.name!r} is already disposed")
        key = self._next_key
        self._next_key = key + 1
        self._cleanups[key] = cleanup
        return key

    def _leave_owner(self) -> None:
        # Without this, an owner that outlives its children (the runtime's root, with an
        # agent layer per encounter) would keep every closed child alive.
        owner = self._owner
        if owner is not None:
            self._owner = None
            scope, key = owner
            scope._cleanups.pop(key, None)


class _Dispose:
    """What `Scope.add` returns: runs its cleanup early, once, and forgets it.

    A small object, not a closure: every registration of every encounter keeps one (a closure
    with its cells cost about three times as much).
    """

    __slots__ = ("_key", "_scope")

    def __init__(self, scope: Scope, key: int) -> None:
        self._scope = scope
        self._key = key

    def __call__(self) -> None:
        cleanup = self._scope._cleanups.pop(self._key, None)  # pyright: ignore[reportPrivateUsage]
        if cleanup is None:
            return
        result = cleanup()
        if inspect.isawaitable(result):
            raise TypeError("an async cleanup cannot be disposed synchronously; close the scope")

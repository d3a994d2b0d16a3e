"""Reversible effects: every registration returns a disposer, and a scope undoes them in reverse."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable

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


class ScopeDisposedError(RuntimeError):
    """Raised when something registers on a scope that was already disposed."""


class Scope:
    """An owner of effects: what is registered through it is undone, newest first, on close."""

    __slots__ = ("_cleanups", "_closed", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._cleanups: list[AsyncCleanup] = []
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def add(self, cleanup: AsyncCleanup) -> Disposer:
        """Own `cleanup`; the returned disposer runs it early and forgets it."""
        if self._closed:
            raise ScopeDisposedError(f"scope {self.name!r} is already disposed")
        self._cleanups.append(cleanup)

        def dispose() -> None:
            try:
                self._cleanups.remove(cleanup)
            except ValueError:
                return
            result = cleanup()
            if inspect.isawaitable(result):
                raise TypeError(
                    "an async cleanup cannot be disposed synchronously; close the scope"
                )

        return dispose

    async def aclose(self) -> None:
        """Undo everything in reverse order; a failing cleanup is logged and the rest still run."""
        if self._closed:
            return
        self._closed = True
        while self._cleanups:
            cleanup = self._cleanups.pop()
            try:
                result = cleanup()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                _log.exception("cleanup failed while disposing scope %r", self.name)

    def close_sync(self) -> None:
        """Undo synchronous effects in reverse order (for scopes that own no async cleanups)."""
        if self._closed:
            return
        self._closed = True
        while self._cleanups:
            cleanup = self._cleanups.pop()
            try:
                result = cleanup()
                if inspect.isawaitable(result):
                    close = getattr(result, "close", None)
                    if callable(close):
                        close()
                    _log.error("scope %r: async cleanup skipped by close_sync", self.name)
            except Exception:
                _log.exception("cleanup failed while disposing scope %r", self.name)

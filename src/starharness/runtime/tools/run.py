"""What a running tool sees: its call, the agent's context, a cancel signal, and turn controls."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from ..kernel import Context, Disposer

_log = logging.getLogger("starharness.runtime.tools")


class CancelSignal(asyncio.Event):
    """An asyncio.Event that also runs callbacks when set, so watching it costs no task."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        for callback in tuple(self._callbacks):
            try:
                callback()
            except Exception:
                _log.exception("cancel callback failed")

    def add_callback(self, callback: Callable[[], None]) -> Disposer:
        """Run `callback` when the signal is set (now, if it already is)."""
        if self.is_set():
            callback()
            return _noop
        callbacks = self._callbacks
        callbacks.append(callback)

        def remove() -> None:
            # Removing twice finds nothing, so no `once` wrapper is needed.
            with contextlib.suppress(ValueError):
                callbacks.remove(callback)

        return remove


def _noop() -> None:
    return None


class ToolRunContext:
    """Handed to `execute`: who is calling, a cancel signal, and ways to shape the turn."""

    __slots__ = (
        "_concluded",
        "_deferred",
        "arguments",
        "call_id",
        "cancel",
        "ctx",
        "name",
        "session_id",
    )

    def __init__(
        self,
        *,
        call_id: str,
        name: str,
        ctx: Context,
        session_id: str = "",
        arguments: str = "",
        cancel: CancelSignal | None = None,
    ) -> None:
        self.call_id = call_id
        self.name = name
        self.ctx = ctx
        """The calling agent's context (tools reach services and the agent's layer through it)."""
        self.session_id = session_id
        self.arguments = arguments
        """The raw JSON arguments as the model sent them."""
        self.cancel = cancel if cancel is not None else CancelSignal()
        self._concluded = False
        self._deferred: list[str] | None = None

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def conclude_turn(self) -> None:
        """End the turn after this step's results are logged, without another model request."""
        self._concluded = True

    @property
    def concludes_turn(self) -> bool:
        return self._concluded

    def defer_context(self, text: str) -> None:
        """Add `text` as context for the model after this step's tool results."""
        if self._deferred is None:
            self._deferred = []
        self._deferred.append(text)

    @property
    def deferred(self) -> tuple[str, ...]:
        return tuple(self._deferred) if self._deferred else ()

"""A queue and an event for one WebSocket's protocol, without asyncio's per-object deques.

`asyncio.Queue` holds three deques and an `asyncio.Event` (one more); an empty deque still
allocates a 64-slot block (about 0.76 KB), so uvicorn's WebSocket protocol, with its own
`writable` event, spends about 3.8 KB of every open connection on them (bench/ws_heap.py).
These keep the methods that protocol calls and allocate waiters only while someone waits.
Plain asyncio: nothing here touches a library's insides (`ws_lean.py` uses them).
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

_T = TypeVar("_T")


class LightQueue(Generic[_T]):
    """An unbounded FIFO with `put_nowait`, `get`, `take`, `empty` and `qsize`."""

    __slots__ = ("_getters", "_handoff", "_items")

    def __init__(self) -> None:
        self._items: list[_T] = []
        self._getters: list[asyncio.Future[None]] | None = None
        self._handoff: asyncio.Future[_T] | None = None

    def put_nowait(self, item: _T) -> None:
        handoff = self._handoff
        if handoff is not None:
            self._handoff = None
            if not handoff.done():  # else its reader was cancelled: the item waits in line
                handoff.set_result(item)
                self._handed_off()
                return
        self._items.append(item)
        getters = self._getters
        if getters:
            for getter in getters:
                if not getter.done():
                    getter.set_result(None)
                    break

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    async def get(self) -> _T:
        """The oldest item, waiting for one if there is none (cancelling loses nothing)."""
        while not self._items:
            getter = asyncio.get_running_loop().create_future()
            getters = self._getters
            if getters is None:
                getters = self._getters = []
            getters.append(getter)
            try:
                await getter
            finally:
                getters.remove(getter)
                if not getters:
                    self._getters = None
        return self._items.pop(0)

    def take(self) -> asyncio.Future[_T]:
        """A future of the oldest item; with none queued, `put_nowait` hands the next one to it.

        For a single reader that awaits nothing else in between (no `get` alongside): waiting
        costs it one future, where a coroutine kept a frame. An item handed over is gone from
        the queue, so a reader cancelled before it resumes loses it (use `get` to lose none).
        """
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        if self._items:
            future.set_result(self._items.pop(0))
            self._taken()
            return future
        if self._handoff is not None and not self._handoff.done():
            raise RuntimeError("take() is already waiting for this queue's next item")
        self._handoff = future
        return future

    def _taken(self) -> None:
        """Called once `take` took a queued item (a hook for subclasses)."""

    def _handed_off(self) -> None:
        """Called once `put_nowait` handed an item to a waiting `take` (a hook for subclasses)."""


class LightEvent:
    """`set`, `clear`, `is_set` and `wait`, as asyncio.Event; waiting when set costs nothing."""

    __slots__ = ("_value", "_waiters")

    def __init__(self) -> None:
        self._value = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if self._value:
            return
        self._value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        waiter = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
        waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is waiters and waiter in waiters:
                waiters.remove(waiter)
        return True

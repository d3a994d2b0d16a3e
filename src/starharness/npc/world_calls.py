"""Calling the game's world: in worker threads, or on the loop when the game says it is quick."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TypeVar, TypeVarTuple

_T = TypeVar("_T")
_A = TypeVarTuple("_A")
DEFAULT_WORLD_CONNECTIONS = 8
"""World calls at once (threads, and connections to a database world) by default."""


@dataclass(frozen=True, slots=True)
class WorldCalls:
    """Where a server runs its world's calls: on the event loop, or in `executor`'s threads.

    A thread hand-off costs more CPU than a short SQLite read (about 0.15 ms on a small VM),
    so a game whose world calls are short says so with `Game.world_calls_inline`. A server
    gives a world on a network database threads of its own (`world_connections` of them), so
    its calls neither queue behind other thread work nor outnumber the world's connections.
    """

    inline: bool = False
    executor: Executor | None = None
    """None: the event loop's default executor."""

    async def run(self, fn: Callable[[*_A], _T], /, *args: *_A) -> _T:
        """`fn(*args)` on the event loop if inline, else in a worker thread."""
        if self.inline:
            return fn(*args)
        return await self.thread(fn, *args)

    def thread(self, fn: Callable[[*_A], _T], /, *args: *_A) -> asyncio.Future[_T]:
        """`fn(*args)` in a worker thread whatever `inline` says (long work, such as a tick)."""
        return asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)


IN_THREADS = WorldCalls()
"""Every call in a thread of the event loop's default executor."""

"""Calling the game's world: in a worker thread, or on the loop when the game says it is quick."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def call_world(
    inline: bool, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`fn(*args)` on the event loop if `inline`, else in a worker thread.

    A thread hand-off costs more CPU than a short SQLite read (about 0.15 ms on a small VM),
    so a game whose world calls are short says so with `Game.world_calls_inline`.
    """
    if inline:
        return fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)

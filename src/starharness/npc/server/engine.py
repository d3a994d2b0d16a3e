"""uvicorn embedded in one of our commands: the NPC server's and the web UI's one engine.

The command that runs it owns Ctrl-C, so uvicorn installs no signal handlers of its own; and a
server that dies while starting says so instead of leaving its caller waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator

import uvicorn

_POLL_S = 0.005


class EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the command that runs us owns Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


async def until_started(engine: EmbeddedServer, task: asyncio.Task[None], what: str) -> None:
    """Wait until `engine` listens; raise what stopped it (or that it stopped) if it did not."""
    while not engine.started:
        if task.done():
            task.result()
            raise RuntimeError(f"{what} stopped while starting")
        await asyncio.sleep(_POLL_S)

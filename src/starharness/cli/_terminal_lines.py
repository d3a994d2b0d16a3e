"""Input lines for terminal commands: from stdin on a thread, or fed by a test."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Protocol, TextIO


class LineSource(Protocol):
    """Where a terminal command reads what the person types."""

    async def next_line(self) -> str | None:
        """The next line without its newline; None once the input has ended (Ctrl-D)."""
        ...


class QueuedLines:
    """Lines handed over in code (tests, or another front end)."""

    def __init__(self, *lines: str) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._ended = False
        self.feed(*lines)

    def feed(self, *lines: str) -> None:
        for line in lines:
            self._queue.put_nowait(line)

    def end(self) -> None:
        """Like Ctrl-D: after the queued lines, the input ends."""
        self._queue.put_nowait(None)

    async def next_line(self) -> str | None:
        if self._ended:
            return None
        line = await self._queue.get()
        if line is None:
            self._ended = True
        return line


class StreamLines:
    """Lines of a text stream (stdin), read ahead on a daemon thread.

    A read blocked on a terminal cannot be cancelled, so the reader is a daemon thread: it does
    not keep the process alive after `/quit`. Waiting for a line is an ordinary cancellable
    await, so cancelling a turn never loses what was typed.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._thread: threading.Thread | None = None
        self._ended = False

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        queue = self._queue
        stream = self._stream

        def hand_over(line: str | None) -> bool:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the event loop is closed: nobody is listening any more
                return False
            return True

        def pump() -> None:
            with contextlib.suppress(OSError, ValueError):
                for line in iter(stream.readline, ""):
                    if not hand_over(line.rstrip("\r\n")):
                        return
            hand_over(None)

        self._thread = threading.Thread(target=pump, name="stdin-lines", daemon=True)
        self._thread.start()

    async def next_line(self) -> str | None:
        if self._ended:
            return None
        if self._thread is None:
            self._start()
        line = await self._queue.get()
        if line is None:
            self._ended = True
        return line

"""Lines typed (or piped) into standard input, as an async iterator."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import AsyncIterator

_CHUNK = 4096


async def input_lines(fd: int | None = None) -> AsyncIterator[str]:
    """Yield each line read from file descriptor `fd` (default: stdin), until end of input."""
    source = fd if fd is not None else sys.stdin.fileno()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def deliver(line: str | None) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        except RuntimeError:
            return False  # the loop has closed: nobody is listening any more
        return True

    def read() -> None:
        pending = b""
        while chunk := _read_chunk(source):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                if not deliver(_decode(raw)):
                    return
        if pending:
            deliver(_decode(pending))
        deliver(None)

    # A blocking read cannot be cancelled, so the reader is a daemon thread that must not keep
    # the process alive after Ctrl-C or /quit. It reads the raw descriptor rather than
    # sys.stdin: a daemon thread blocked inside sys.stdin's buffered reader holds its lock and
    # makes the interpreter abort at exit.
    threading.Thread(target=read, name="talk-input", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line


def _read_chunk(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""  # a closed terminal or pipe is the end of input


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")

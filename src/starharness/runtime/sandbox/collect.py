"""Collecting a confined process's output while it runs, and never leaving it behind."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from .output import HeadTail

if TYPE_CHECKING:
    from .processes import ProcessOwner

_READ_SIZE = 65536
_DRAIN_AFTER_EXIT_S = 1.0


@contextlib.asynccontextmanager
async def collected(
    owner: ProcessOwner,
    process: asyncio.subprocess.Process,
    stream: asyncio.StreamReader | None,
    sink: HeadTail,
) -> AsyncGenerator[None]:
    """Feed `stream` into `sink` while the body runs; afterwards kill the process if it lives.

    A background child may hold the pipe open after the process ended, so a body that ends
    normally gives the reader a moment to catch the last bytes.
    """
    if stream is None:
        raise RuntimeError("the process's output pipe is missing")
    reader = asyncio.ensure_future(_drain(stream, sink))
    try:
        yield
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_AFTER_EXIT_S):
                await asyncio.shield(reader)
    finally:
        if process.returncode is None:
            await asyncio.shield(owner.kill(process))
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def _drain(stream: asyncio.StreamReader, sink: HeadTail) -> None:
    while True:
        data = await stream.read(_READ_SIZE)
        if not data:
            return
        sink.feed(data)

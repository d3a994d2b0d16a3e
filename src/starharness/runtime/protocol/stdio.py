"""The session protocol over stdin/stdout: one JSON-RPC message per line."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncGenerator, Callable
from typing import BinaryIO, Protocol

from ..approvals import APPROVALS
from ..kernel import Context
from .approval_router import ApprovalRouter
from .connection import Connection
from .host import HostInfo, SessionHost
from .jsonrpc import INVALID_REQUEST, MAX_LINE, RpcError, error_line, update_line
from .lines import LineReader, LineTooLongError


class StdioOut(Protocol):
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class FileOut:
    """stdout that is a regular file (no pipe transport exists for files; writes do not wait)."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._file.close()


class PipeOut:
    def __init__(self, transport: asyncio.WriteTransport, writer: asyncio.StreamWriter) -> None:
        self._transport = transport
        self._writer = writer

    @property
    def writer(self) -> asyncio.StreamWriter:
        return self._writer

    def write(self, data: bytes) -> None:
        self._writer.write(data)

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    def close(self) -> None:
        self._transport.close()


@contextlib.asynccontextmanager
async def protected_stdio() -> AsyncGenerator[tuple[asyncio.StreamReader, StdioOut]]:
    """Non-blocking stdin and a private copy of stdout. Meanwhile fd 1 points at stderr, so a
    stray print (ours, a library's, a child process's) cannot corrupt the protocol stream."""
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    out_fd = os.dup(1)
    saved = os.dup(1)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=MAX_LINE)
    stdin = os.fdopen(os.dup(0), "rb", buffering=0)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), stdin
    )
    out_file = os.fdopen(out_fd, "wb", buffering=0)
    out: StdioOut
    if stat.S_ISREG(os.fstat(out_fd).st_mode):
        out = FileOut(out_file)
    else:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(), out_file
        )
        out = PipeOut(transport, asyncio.StreamWriter(transport, protocol, None, loop))
    try:
        yield reader, out
    finally:
        read_transport.close()
        await out.drain()
        out.close()
        os.dup2(saved, 1)
        os.close(saved)


class LineBatcher:
    """Lines for one output, written together when they come close together.

    Each write wakes the reader (on a loaded machine, a context switch or two), so updates wait
    up to `passes` passes of the event loop for company; an answer goes out at once with them.
    A turn's last updates and its answer are a few passes apart, so they leave in one write; a
    waiting update never outlives those passes (they run without blocking on I/O).
    """

    def __init__(self, write: Callable[[bytes], None], passes: int = 8) -> None:
        self._write = write
        self._passes = passes
        self._pending: list[str] = []
        self._left = 0
        self._scheduled = False
        self._loop = asyncio.get_running_loop()

    def update(self, line: str) -> None:
        self._pending.append(line)
        if not self._scheduled:
            self._scheduled = True
            self._left = self._passes
            self._loop.call_soon(self._tick)

    def answer(self, line: str) -> None:
        self._pending.append(line)
        self.flush()

    def _tick(self) -> None:
        if self._left > 0 and self._pending:
            self._left -= 1
            self._loop.call_soon(self._tick)
            return
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        if self._pending:
            data = "\n".join(self._pending) + "\n"
            self._pending.clear()
            self._write(data.encode("utf-8"))


async def serve_stdio(ctx: Context, info: HostInfo) -> None:
    """Serve the session protocol on stdin/stdout until stdin ends or `shutdown` is answered."""
    router = ApprovalRouter(ctx.maybe(APPROVALS))
    try:
        async with protected_stdio() as (reader, writer):
            lines = LineBatcher(writer.write)

            incoming = LineReader(reader, MAX_LINE)

            async def read_line() -> str | None:
                while True:
                    try:
                        raw = await incoming.read()
                    except LineTooLongError as error:  # skipped whole: one answer
                        lines.answer(error_line(None, RpcError(INVALID_REQUEST, str(error))))
                        continue
                    if raw is None:
                        return None
                    return raw.decode("utf-8", errors="replace")

            host = SessionHost(ctx, router, info, lambda update: lines.update(update_line(update)))
            await Connection(host, lines.answer).run(read_line)
            lines.flush()
            await writer.drain()
    finally:
        router.close()

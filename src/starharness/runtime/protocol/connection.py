"""One protocol connection over any line transport: requests run concurrently, answers in order
of completion, updates interleaved; bad input is answered with an error and the line read next."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from .host import SessionHost
from .jsonrpc import (
    INTERNAL_ERROR,
    RpcError,
    error_line,
    parse_message,
    result_line,
)

_log = logging.getLogger("starharness.runtime.protocol")

ReadLine = Callable[[], Awaitable[str | None]]
"""The next message (one line of text without its newline), or None at the end of input."""


class Connection:
    """Owns the request tasks of one connection; `run` returns at end of input or shutdown."""

    def __init__(self, host: SessionHost, send: Callable[[str], None]) -> None:
        self.host = host
        self._send = send
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, read_line: ReadLine) -> None:
        """Serve until the input ends or `shutdown` was answered; then close every session."""
        stop = asyncio.create_task(self.host.shutdown_requested.wait())
        try:
            while True:
                read = asyncio.ensure_future(read_line())
                await asyncio.wait({read, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not read.done():
                    read.cancel()
                    await asyncio.gather(read, return_exceptions=True)
                    break
                line = read.result()
                if line is None:
                    break
                if line.strip():
                    self.handle(line)
                if stop.done():
                    break
        finally:
            stop.cancel()
            await asyncio.gather(stop, return_exceptions=True)
            await self.aclose()

    def handle(self, line: str) -> None:
        """Start answering one incoming line (in its own task, so a long prompt blocks nothing)."""
        task = asyncio.get_running_loop().create_task(self._answer(line))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, line: str) -> None:
        try:
            request = parse_message(line)
        except RpcError as error:
            self._send(error_line(error.request_id, error))
            return
        try:
            result = await self.host.call(request.method, request.params)
        except RpcError as error:
            if request.has_id:
                self._send(error_line(request.id, error))
            return
        except asyncio.CancelledError:
            raise
        except Exception as error:
            _log.exception("%s failed", request.method)
            if request.has_id:
                message = f"{request.method} failed: {type(error).__name__}: {error}"
                self._send(error_line(request.id, RpcError(INTERNAL_ERROR, message)))
            return
        if request.has_id:
            self._send(result_line(request.id, result))

    async def aclose(self) -> None:
        """Let answered-but-unsent work finish, cancel what still runs, dispose the sessions."""
        # A shutdown answer may still be on its way out; the others are cut off by disposal.
        await self.host.aclose()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

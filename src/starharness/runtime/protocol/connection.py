"""One protocol connection over any line transport: requests run concurrently, answers in order
of completion, updates interleaved; bad input is answered with an error and the line read next."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .host import SessionHost
from .jsonrpc import (
    INTERNAL_ERROR,
    SHUTTING_DOWN,
    RpcError,
    error_line,
    parse_message,
    result_line,
)

_log = logging.getLogger("starharness.runtime.protocol")

ReadLine = Callable[[], Awaitable[str | None]]
"""The next message (one line of text without its newline), or None at the end of input."""

DRAIN_S = 30.0
"""How long requests still running at shutdown get to finish (their sessions are disposed, so a
prompt ends at once); past it they are cancelled and answered -32006."""
LATE_LINE_S = 0.1
"""After the sessions closed, how long a line already on its way is still read and refused:
a client that sent requests before it read the shutdown's answer hears -32006 for each."""


class Connection:
    """Owns the request tasks of one connection; `run` returns at end of input or shutdown."""

    def __init__(self, host: SessionHost, send: Callable[[str], None]) -> None:
        self.host = host
        self._send = send
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, read_line: ReadLine) -> None:
        """Serve until the input ends or `shutdown` was answered; then close every session."""
        stop = asyncio.create_task(self.host.shutdown_requested.wait())
        ended = False
        try:
            ended = await self._handle_lines(read_line, until=stop)
        finally:
            stop.cancel()
            await asyncio.gather(stop, return_exceptions=True)
            closing = asyncio.ensure_future(self.aclose())
            if not ended:
                # Lines that come while the sessions close are answered -32006, not dropped; a
                # transport that fails now just stops the reading.
                with contextlib.suppress(Exception):
                    ended = await self._handle_lines(read_line, until=closing)
            await closing
            # A line read just as the closing ended was handed on too: its refusal is awaited.
            await asyncio.gather(*self._tasks, return_exceptions=True)
            if not ended:
                await self._refuse_late(read_line)

    async def _handle_lines(self, read_line: ReadLine, *, until: asyncio.Future[Any]) -> bool:
        """Hand each line read to `handle` until `until` is done; True when the input ended."""
        while not until.done():
            read = asyncio.ensure_future(read_line())
            await asyncio.wait({read, until}, return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()
                await asyncio.gather(read, return_exceptions=True)
                return False
            line = read.result()
            if line is None:
                return True
            if line.strip():
                self.handle(line)
        return False

    async def _refuse_late(self, read_line: ReadLine) -> None:
        """Refuse (-32006) the lines that are still arriving once everything has closed."""
        while True:
            try:
                line = await asyncio.wait_for(read_line(), LATE_LINE_S)
            except (TimeoutError, OSError, ValueError):
                return
            if line is None:
                return
            if not line.strip():
                continue
            try:
                request = parse_message(line)
            except RpcError as error:
                self._send(error_line(error.request_id, error))
                continue
            if request.has_id:
                stopped = RpcError(SHUTTING_DOWN, f"{request.method}: the server has shut down")
                self._send(error_line(request.id, stopped))

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
            if request.method == "shutdown":
                # Its answer is the last: every request in flight is answered before it.
                await self._others_done()
        except RpcError as error:
            if request.has_id:
                self._send(error_line(request.id, error))
            return
        except asyncio.CancelledError:
            if request.has_id:
                stopped = RpcError(SHUTTING_DOWN, f"{request.method}: the server stopped first")
                self._send(error_line(request.id, stopped))
            raise
        except Exception as error:
            _log.exception("%s failed", request.method)
            if request.has_id:
                message = f"{request.method} failed: {type(error).__name__}: {error}"
                self._send(error_line(request.id, RpcError(INTERNAL_ERROR, message)))
            return
        if request.has_id:
            self._send(result_line(request.id, result))

    async def _others_done(self) -> None:
        me = asyncio.current_task()
        others = [task for task in self._tasks if task is not me]
        if others:
            await asyncio.wait(others, timeout=DRAIN_S)

    async def aclose(self) -> None:
        """Dispose the sessions, then let every request still running end and be answered (a
        prompt ends `aborted` once its session is gone); what outlives DRAIN_S is cancelled,
        and answered -32006."""
        await self.host.aclose()
        while self._tasks:
            tasks = set(self._tasks)
            _, late = await asyncio.wait(tasks, timeout=DRAIN_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

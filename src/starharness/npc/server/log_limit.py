"""Log lines that cannot flood: one line per kind per interval, with a count of the rest.

At the descriptor limit asyncio reports each failed `accept()` to the loop's exception handler
with a traceback, up to the listener's backlog (2,048 under uvicorn) each time the listening
socket is ready: about 3 MB of log a second that served nobody. Shed sockets (a header timeout,
an oversized header, a client over its connection cap) come in floods just the same.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_INTERVAL_S = 10.0
_MAX_KINDS = 256
ACCEPT_FAILED = "socket.accept() out of system resource"
"""The message asyncio's selector loop reports a failed accept with (3.11-3.13)."""
_RETRY_FAILED = "Exception in callback BaseSelectorEventLoop._start_serving("
"""How asyncio reports a failed retry of a listener it paused after a failed accept."""
_RETRY_S = 1.0
"""asyncio's pause before it listens again after a failed accept (constants.ACCEPT_RETRY_DELAY)."""
_RESOURCE_ERRORS = frozenset((errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM))


@dataclass(slots=True)
class _Kind:
    logged_at: float
    suppressed: int = 0


class LogLimiter:
    """Logs the first line of a kind, then counts that kind's lines until `interval_s` passed."""

    __slots__ = ("_clock", "_interval_s", "_kinds", "_logger")

    def __init__(
        self,
        logger: logging.Logger,
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._clock = clock
        self._kinds: dict[str, _Kind] = {}

    @property
    def interval_s(self) -> float:
        return self._interval_s

    def admit(self, kind: str) -> int | None:
        """None when a line of `kind` went out within the interval (it is counted); else how
        many were counted since the last one (the caller logs its line now)."""
        now = self._clock()
        seen = self._kinds.get(kind)
        if seen is not None and now - seen.logged_at < self._interval_s:
            seen.suppressed += 1
            return None
        if len(self._kinds) >= _MAX_KINDS:
            self._kinds.clear()  # kinds are a handful; a caller minting them must not grow this
        self._kinds[kind] = _Kind(now)
        return 0 if seen is None else seen.suppressed

    def log(self, level: int, kind: str, message: str, *args: object) -> bool:
        """Log `message % args` unless a line of `kind` went out within the interval (then
        count it); a logged line says how many were counted since the last one. True if logged."""
        suppressed = self.admit(kind)
        if suppressed is None:
            return False
        if suppressed:
            self._logger.log(
                level,
                message + " (and %d more like it in the last %g s)",
                *args,
                suppressed,
                self._interval_s,
            )
        else:
            self._logger.log(level, message, *args)
        return True

    def flush(self) -> None:
        """Report the lines still only counted (at the end of a server's life)."""
        for kind, seen in self._kinds.items():
            if seen.suppressed:
                self._logger.warning("%d more %s lines were not logged", seen.suppressed, kind)
                seen.suppressed = 0


class LimitedRecords(logging.Filter):
    """A filter for a library's logger (uvicorn's): each message template is logged once per
    interval, the next one that goes out saying how many were dropped. uvicorn warns once per
    bad request ("Invalid HTTP request received.", "Unsupported upgrade request."): a client
    sending those in a loop filled the log."""

    def __init__(self, limiter: LogLimiter) -> None:
        super().__init__()
        self._limiter = limiter

    def filter(self, record: logging.LogRecord) -> bool:
        suppressed = self._limiter.admit(f"{record.levelno}:{record.msg}")
        if suppressed is None:
            return False
        if suppressed:
            record.msg = (
                f"{record.getMessage()} (and {suppressed} more like it in the last "
                f"{self._limiter.interval_s:g} s)"
            )
            record.args = None
        return True


_Handler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object]


class AcceptErrors:
    """The running loop's exception handler, while installed: a failed accept (out of
    descriptors or memory) is one warning line per interval, with a count; everything else
    goes to the handler that was there before (or the loop's default)."""

    __slots__ = ("_failed_at", "_limiter", "_loop", "_previous")

    def __init__(self, limiter: LogLimiter) -> None:
        self._limiter = limiter
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: _Handler | None = None
        self._failed_at: float | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._previous = loop.get_exception_handler()
        loop.set_exception_handler(self)

    async def aclose(self) -> None:
        """Uninstall, once the retries asyncio scheduled after a recent failed accept ran:
        they find the listener closed, and would each print a traceback."""
        failed_at = self._failed_at
        if failed_at is not None:
            left = failed_at + _RETRY_S + 0.2 - time.monotonic()
            if left > 0:
                await asyncio.sleep(left)
        self.uninstall()

    def uninstall(self) -> None:
        """Put the previous handler back (unless another was installed over this one)."""
        loop, self._loop = self._loop, None
        if loop is not None and loop.get_exception_handler() is self:
            loop.set_exception_handler(self._previous)
        self._limiter.flush()

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if (
            context.get("message") == ACCEPT_FAILED
            and isinstance(exc, OSError)
            and exc.errno in _RESOURCE_ERRORS
        ):
            self._failed_at = time.monotonic()
            self._limiter.log(
                logging.WARNING,
                f"accept-{errno.errorcode.get(exc.errno or 0, exc.errno)}",
                "cannot accept a connection: %s (the process's descriptor limit?); "
                "retrying every second",
                exc.strerror or exc,
            )
            return
        message = context.get("message")
        if (
            isinstance(message, str)
            and message.startswith(_RETRY_FAILED)
            and isinstance(exc, ValueError | OSError)
        ):
            # asyncio schedules a retry per failed accept (thousands a second at the limit);
            # those still due when the server stops find the listener closed.
            self._limiter.log(
                logging.DEBUG, "accept-retry", "a paused listener's retry found it closed: %s", exc
            )
            return
        if self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)


UVICORN_LOGGER = "uvicorn.error"
ASYNCIO_LOGGER = "asyncio"
"""asyncio warns "socket.send() raised exception." for each write past the fifth to a socket
that is gone: uvicorn's WebSocket still writes the answers to frames a client sent before it
vanished (a flooder leaving mid-flood)."""
_LIMITED_LOGGERS = (UVICORN_LOGGER, ASYNCIO_LOGGER)


class ServerLogs:
    """A running server's guard on its log: failed accepts (the loop's exception handler),
    uvicorn's per-request warnings and asyncio's per-write ones, each at most a line per
    interval, while it runs."""

    __slots__ = ("_accepts", "_records")

    def __init__(self, logger: logging.Logger) -> None:
        self._accepts = AcceptErrors(LogLimiter(logger))
        self._records = LimitedRecords(LogLimiter(logger))

    def install(self) -> None:
        self._accepts.install()
        for name in _LIMITED_LOGGERS:
            logging.getLogger(name).addFilter(self._records)

    async def aclose(self) -> None:
        for name in _LIMITED_LOGGERS:
            logging.getLogger(name).removeFilter(self._records)
        await self._accepts.aclose()

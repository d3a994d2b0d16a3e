"""One message per line from a byte stream, each line bounded: a longer one is skipped whole."""

from __future__ import annotations

import asyncio

from ..errors import StarHarnessError


class LineTooLongError(StarHarnessError):
    """A line was longer than the reader's limit; it was skipped up to its newline."""


class LineReader:
    """Lines of `reader`, at most `limit` bytes long: the limit `reader` was made with
    (asyncio.StreamReader(limit=...)), which is what enforces it.

    asyncio's own `readline` drops what it has buffered of a long line and raises, then returns
    the rest of that line as if it were the next one, so one long line got two answers (and a
    20 MB one more). This skips a long line whole and reports it once.
    """

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self._reader = reader
        self._limit = limit

    async def read(self) -> bytes | None:
        """The next line without its newline (a last line may lack one), or None at the end;
        LineTooLongError once for each line past the limit, and the line after it next."""
        try:
            return (await self._reader.readuntil(b"\n"))[:-1]
        except asyncio.IncompleteReadError as end:
            return end.partial or None
        except asyncio.LimitOverrunError as over:
            await self._skip(over.consumed)
            raise LineTooLongError(f"a line is longer than {self._limit} bytes") from None

    async def _skip(self, consumed: int) -> None:
        """Drop the rest of an overlong line, newline included, holding no more than the limit."""
        while True:
            # `consumed` bytes are buffered already: up to the newline, or all of a full buffer.
            await self._reader.readexactly(consumed)
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return  # the input ended inside the long line
            except asyncio.LimitOverrunError as over:
                consumed = over.consumed

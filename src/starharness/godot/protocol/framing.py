"""Newline-delimited framing with a hard line-size limit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_HEAD_BYTES: Final = 512
_ID_PATTERN: Final = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line that exceeded the limit and was dropped; `head` keeps its first bytes."""

    size: int
    head: bytes

    def request_id(self) -> str | None:
        """The `id` of the dropped response when its head shows one, so its caller can fail."""
        match = _ID_PATTERN.search(self.head)
        return match.group(1).decode(errors="replace") if match else None


class LineSplitter:
    """Turns a byte stream into complete lines; drops (and reports) lines over the limit."""

    __slots__ = ("_buffer", "_discarded", "_discarding", "_head", "_max")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False
        self._discarded = 0
        self._head = b""

    def feed(self, data: bytes) -> list[bytes | OversizedLine]:
        """Complete lines (without the newline, blank ones skipped) found so far."""
        out: list[bytes | OversizedLine] = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._finish_line(data[start:end], out)
            start = end + 1
        if start < len(data):
            self._keep_partial(data[start:])
        return out

    def _finish_line(self, piece: bytes, out: list[bytes | OversizedLine]) -> None:
        if self._discarding:
            out.append(OversizedLine(self._discarded + len(piece), self._head))
            self._discarding = False
            self._discarded = 0
            self._head = b""
            return
        if self._buffer:
            self._buffer += piece
            line = bytes(self._buffer)
            self._buffer.clear()
        else:
            line = piece
        if len(line) > self._max:
            out.append(OversizedLine(len(line), line[:_HEAD_BYTES]))
        elif line.strip():
            out.append(line)

    def _keep_partial(self, rest: bytes) -> None:
        if self._discarding:
            self._discarded += len(rest)
            return
        if len(self._buffer) + len(rest) > self._max:
            self._head = (bytes(self._buffer) + rest[:_HEAD_BYTES])[:_HEAD_BYTES]
            self._discarded = len(self._buffer) + len(rest)
            self._buffer.clear()
            self._discarding = True
            return
        self._buffer += rest

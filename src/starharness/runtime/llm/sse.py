"""A small incremental Server-Sent Events parser that yields only the `data` of each event.

Chat-completions streams use nothing but `data:` lines, so event names, ids and retry hints are
skipped, and a one-line event (the usual case) is passed on without copying.
"""

from __future__ import annotations

import re

from .errors import ProtocolError

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_OTHER_FIELDS = frozenset((b"data", b"event", b"id", b"retry"))


class SseParser:
    """Feed raw body bytes in any chunking; get back the data payloads of completed events."""

    __slots__ = ("_data", "_pending", "_skip_lf", "lines_seen")

    def __init__(self) -> None:
        self._pending = b""
        self._data: list[bytes] = []
        # A chunk ended in CR: if the next one starts with LF, that LF belongs to the same break.
        self._skip_lf = False
        self.lines_seen = 0
        """Complete non-empty lines so far (tells an empty body from a body of junk)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """Consume `chunk`; return the data of every event it completed, in order."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buffer = self._pending + chunk if self._pending else chunk
        if b"\r" in buffer:
            if buffer[-1:] == b"\r":
                self._skip_lf = True
                lines = _LINE_BREAK.split(buffer[:-1])
                lines.append(b"")
            else:
                lines = _LINE_BREAK.split(buffer)
        else:
            lines = buffer.split(b"\n")
        self._pending = lines.pop()
        events: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
                continue
            self.lines_seen += 1
            if line[:5] == b"data:":
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line[:1] != b":" and line.partition(b":")[0] not in _OTHER_FIELDS:
                # The spec would skip it, but no chat server sends one: it means a broken stream.
                text = line[:80].decode("utf-8", "replace")
                raise ProtocolError(f"a line of the event stream is not an SSE field: {text!r}")
            # Comments (":" keep-alives) and the other fields carry nothing we use.
        return events

    def close(self) -> list[bytes]:
        """End of body: an event missing only its blank line still counts; a torn line does not."""
        if self._pending:
            self._pending = b""
        data = self._data
        if not data:
            return []
        event = data[0] if len(data) == 1 else b"\n".join(data)
        data.clear()
        return [event]

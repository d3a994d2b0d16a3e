"""Output kept within a byte budget: the head and the tail of a command, with a note on the cut."""

from __future__ import annotations


class HeadTail:
    """Keeps the first and last `budget / 2` bytes of a stream and counts what fell between."""

    __slots__ = ("_head", "_limit", "_tail", "total")

    def __init__(self, budget: int) -> None:
        self._limit = max(budget // 2, 1)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            extra = len(self._tail) - self._limit
            if extra > 0:
                del self._tail[:extra]

    @property
    def omitted(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def text(self) -> str:
        """The kept output; a note in the middle says how many bytes were left out."""
        head = self._head.decode(errors="replace")
        if not self._tail:
            return head
        tail = self._tail.decode(errors="replace")
        if self.omitted == 0:
            return (bytes(self._head) + bytes(self._tail)).decode(errors="replace")
        return (
            f"{head}\n[... output truncated: {self.omitted} of {self.total} bytes omitted; "
            f"redirect to a file and read parts of it to see more ...]\n{tail}"
        )


class Unread:
    """A job's output not yet read, at most `limit` bytes: the oldest unread bytes drop first."""

    __slots__ = ("_data", "_limit", "dropped", "total")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._data = bytearray()
        self.dropped = 0
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._data += data
        extra = len(self._data) - self._limit
        if extra > 0:
            del self._data[:extra]
            self.dropped += extra

    def take(self, most: int) -> tuple[str, int]:
        """Up to `most` unread bytes as text, and how many were dropped since the last take."""
        chunk = bytes(self._data[:most])
        del self._data[:most]
        dropped, self.dropped = self.dropped, 0
        return chunk.decode(errors="replace"), dropped

    def __len__(self) -> int:
        return len(self._data)


class Tail:
    """The last `limit` bytes of a stream, for a display of what a job printed lately."""

    __slots__ = ("_data", "_limit")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._data = bytearray()

    def feed(self, data: bytes) -> None:
        self._data += data
        extra = len(self._data) - self._limit
        if extra > 0:
            del self._data[:extra]

    def text(self) -> str:
        # A cut may land inside a UTF-8 sequence: skip its continuation bytes.
        start = 0
        while start < len(self._data) and self._data[start] & 0xC0 == 0x80:
            start += 1
        return self._data[start:].decode(errors="replace")

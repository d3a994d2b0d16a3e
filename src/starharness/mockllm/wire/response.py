"""Writing responses: whole bodies, chunked streams, and deliberately broken connections."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Iterable
from http import HTTPStatus

_SERVER = "star-harness-mockllm"


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class ResponseWriter:
    """Writes one response at a time onto a connection and remembers whether it may be reused.

    Writes are buffered until `drain` (or `send`/`close`), so an unpaced answer costs one syscall.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._pending: list[bytes] = []
        self.keep_alive = True
        """Whether the current request lets the connection be reused (set per request)."""
        self.reusable = True

    def _head(self, status: int, headers: Iterable[tuple[str, str]], keep_alive: bool) -> bytes:
        lines = [f"HTTP/1.1 {status} {_reason(status)}", f"Server: {_SERVER}"]
        lines.extend(f"{name}: {value}" for name, value in headers)
        lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        *,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Send a complete response with a Content-Length body."""
        all_headers = [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            *headers,
        ]
        self._pending.append(self._head(status, all_headers, self.keep_alive))
        self._pending.append(body)
        await self.drain()
        self.reusable = self.keep_alive

    def start_stream(
        self,
        status: int = 200,
        content_type: str = "text/event-stream; charset=utf-8",
        *,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Write the head of a chunked response; `write_chunk` and `end_stream` follow."""
        all_headers = [
            ("Content-Type", content_type),
            ("Cache-Control", "no-cache"),
            ("Transfer-Encoding", "chunked"),
            *headers,
        ]
        self._pending.append(self._head(status, all_headers, self.keep_alive))
        # Until end_stream runs, the connection holds an unfinished body.
        self.reusable = False

    def write_chunk(self, data: bytes) -> None:
        """Write `data` as one HTTP chunk of the current stream."""
        if data:
            self._pending.append(b"%x\r\n%b\r\n" % (len(data), data))

    def end_stream(self) -> None:
        """Write the terminating zero-length chunk."""
        self._pending.append(b"0\r\n\r\n")
        self.reusable = self.keep_alive

    def write_head_only(self, status: int, content_type: str, content_length: int) -> None:
        """Announce a Content-Length body the caller may then leave unfinished."""
        headers = [("Content-Type", content_type), ("Content-Length", str(content_length))]
        self._pending.append(self._head(status, headers, keep_alive=False))
        self.reusable = False

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (body bytes after `write_head_only`)."""
        self._pending.append(data)

    def _flush(self) -> None:
        if self._pending:
            self._writer.write(b"".join(self._pending))
            self._pending.clear()

    async def drain(self) -> None:
        """Send what is buffered and wait until the transport buffer has room."""
        self._flush()
        await self._writer.drain()

    def close(self) -> None:
        """Close after flushing what was written (a FIN, possibly mid-body)."""
        self.reusable = False
        self._flush()
        self._writer.close()

    def reset(self) -> None:
        """Drop the connection with a TCP reset, discarding anything unsent."""
        self.reusable = False
        self._pending.clear()
        sock = self._writer.get_extra_info("socket")
        if sock is not None:
            # Linger on with a zero timeout turns close() into an RST.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._writer.transport.abort()

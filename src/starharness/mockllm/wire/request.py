"""Reading HTTP/1.1 requests from a stream (Content-Length or chunked bodies, keep-alive)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

MAX_BODY_BYTES = 64 * 1024 * 1024


class MalformedHttpError(Exception):
    """The bytes on the connection are not an HTTP/1.x request we can read."""


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One request: header names are lower-cased; `path` has no query string."""

    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    """Read the next request; None when the peer closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise MalformedHttpError("connection closed in the middle of a request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise MalformedHttpError("request head is too large") from None
    method, path, version, headers = _parse_head(head)
    if headers.get("expect", "").lower() == "100-continue":
        # curl waits for this before sending a large body.
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _read_body(reader, headers)
    return HttpRequest(method=method, path=path, version=version, headers=headers, body=body)


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    request_line = lines[0].split(" ")
    if len(request_line) != 3 or not request_line[2].startswith("HTTP/1."):
        raise MalformedHttpError(f"bad request line: {lines[0][:100]!r}")
    method, target, version = request_line
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise MalformedHttpError(f"bad header line: {line[:100]!r}")
        headers[name.lower()] = value.strip()
    return method, target.split("?", 1)[0], version, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    length_text = headers.get("content-length")
    if length_text is None:
        return b""
    if not length_text.isdigit():
        raise MalformedHttpError(f"bad Content-Length: {length_text!r}")
    length = int(length_text)
    if length > MAX_BODY_BYTES:
        raise MalformedHttpError(f"request body of {length} bytes exceeds {MAX_BODY_BYTES}")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise MalformedHttpError("connection closed before the request body was complete") from None


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    try:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size_text = size_line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise MalformedHttpError(f"bad chunk size: {size_text[:20]!r}") from None
            if size == 0:
                # Trailers (if any) end with an empty line.
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                return b"".join(parts)
            total += size
            if total > MAX_BODY_BYTES:
                raise MalformedHttpError(f"chunked request body exceeds {MAX_BODY_BYTES} bytes")
            parts.append(await reader.readexactly(size))
            if await reader.readexactly(2) != b"\r\n":
                raise MalformedHttpError("chunk data is not followed by CRLF")
    except asyncio.IncompleteReadError:
        raise MalformedHttpError("connection closed inside a chunked request body") from None
    except asyncio.LimitOverrunError:
        raise MalformedHttpError("chunk size line is too long") from None

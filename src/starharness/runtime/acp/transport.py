"""The ACP connection's messages over stdio, read and checked by us: every bad line is answered
here and never reaches the library (whose own reader ended the process on `[]`, `42`, `null`,
a string or a batch, and answered malformed JSON with nothing)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, cast

from ..protocol.jsonrpc import (
    ID_RULE,
    INVALID_REQUEST,
    RequestId,
    RpcError,
    decode_line,
    error_line,
    valid_id,
)
from ..protocol.lines import LineReader, LineTooLongError


class CheckedTransport:
    """A message transport as `acp.run_agent` takes one (`send`, `receive`, `close` of decoded
    JSON-RPC messages), over stdin's lines and stdout's writer.

    `receive` returns only what the library can handle: a request or notification (an object
    with `"jsonrpc": "2.0"`, a non-empty string `method`, an id if any that is null, a bounded
    integer or a short string) or a response (such an id and a `result`, or an `error` object).
    Anything else is answered with the JSON-RPC error that says what is wrong, and the next line
    is read: -32700 for text that is not JSON, -32600 for the rest (batches included).
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int):
        self._lines = LineReader(reader, limit)
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        """One message as one line (one write, so lines never interleave)."""
        await self._write(json.dumps(message, separators=(",", ":")))

    async def receive(self) -> dict[str, Any] | None:
        """The next message the library may handle, or None at the end of input."""
        while True:
            try:
                raw = await self._lines.read()
            except LineTooLongError as error:
                await self._refuse(RpcError(INVALID_REQUEST, str(error)))
                continue
            if raw is None:
                return None
            text = raw.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                return checked_message(text)
            except RpcError as error:
                await self._refuse(error)

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    async def _refuse(self, error: RpcError) -> None:
        with contextlib.suppress(ConnectionError):
            await self._write(error_line(error.request_id, error))

    async def _write(self, line: str) -> None:
        async with self._lock:
            self._writer.write(line.encode("utf-8") + b"\n")
            await self._writer.drain()


def checked_message(text: str) -> dict[str, Any]:
    """`text` as a JSON-RPC request, notification or response; RpcError for anything else."""
    message = decode_line(text)
    if isinstance(message, list):
        raise RpcError(INVALID_REQUEST, "batches are not supported; send one message per line")
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "a message must be a JSON object")
    fields = cast("dict[str, Any]", message)
    has_id = "id" in fields
    if has_id and not valid_id(fields["id"]):
        raise RpcError(INVALID_REQUEST, ID_RULE)
    request_id: RequestId = fields.get("id")
    if fields.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'a message needs "jsonrpc": "2.0"', request_id=request_id)
    if "method" in fields:
        method = fields["method"]
        if not isinstance(method, str) or not method:
            raise RpcError(
                INVALID_REQUEST, "method must be a non-empty string", request_id=request_id
            )
        return fields
    if has_id and _is_response(fields):
        return fields
    raise RpcError(
        INVALID_REQUEST,
        'a message is a request (with "method") or a response (with "id" and "result" or an '
        '"error" object with an integer "code" and a string "message")',
        request_id=request_id,
    )


def _is_response(fields: dict[str, Any]) -> bool:
    if ("result" in fields) == ("error" in fields):
        return False
    if "result" in fields:
        return True
    error = fields["error"]
    if not isinstance(error, dict):
        return False
    body = cast("dict[str, Any]", error)
    return type(body.get("code")) is int and isinstance(body.get("message"), str)

"""uvicorn's websockets (sans-I/O) protocol, keeping less for each open connection.

An idle frame WebSocket spends nearly all its life waiting for the next message; what uvicorn's
protocol keeps meanwhile is most of its heap (bench/ws_heap.py): an instance dict of 37 keys,
asyncio's queue and event (five deques), the handshake's request and response, the parser's
generator frame still holding the request, a coroutine frame for each waiting `receive`, and
per-connection copies of values every connection shares. Here:

- every attribute uvicorn sets lives in a slot (`ws_trim.PROTOCOL_ATTRIBUTES`);
- its receive queue and writable event are the light kinds (`ws_dequeless`), and waiting to
  receive costs one future, not two coroutine frames;
- the handshake (request, response) is let go once answered, the parser is a fresh one after
  it and between frames, and the compression settings, addresses and constant scope parts are
  shared (`ws_trim`).

What it reads and how it answers is uvicorn's own code: only what it keeps differs. Reading
back-pressure is uvicorn's (one message read ahead, then `pause_reading` until the app took
it); the socket gate under it slices what a read brought and holds it while reading is paused.
Subclasses a module that is not uvicorn's public API: `ws.py` chooses it only on the releases
it was tested against, uvicorn's own protocol otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, cast

from starlette.types import Message
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from .ws_dequeless import LightEvent, LightQueue
from .ws_trim import (
    PROTOCOL_ATTRIBUTES,
    restart_idle_parser,
    restart_parser,
    share_extensions,
    share_local,
    share_peer,
    share_scope_parts,
)


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's `websockets-sansio` protocol, with what an open connection keeps trimmed."""

    # In slots an open connection keeps about 1.6 KB less than in an instance dict of 37 keys.
    # An attribute a later release adds would land in the (lazily made) instance dict.
    __slots__ = PROTOCOL_ATTRIBUTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The protocol calls only put_nowait/empty on the queue (and get, in the `receive`
        # overridden here) and set/clear/wait on the event (checked on the releases `ws.py`
        # admits).
        self.queue = _ReceiveQueue(self)  # pyright: ignore[reportAttributeAccessIssue]
        writable = LightEvent()
        writable.set()
        self.writable = writable  # pyright: ignore[reportAttributeAccessIssue]
        share_extensions(self.conn, self.config)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # uvicorn builds both addresses afresh; the same values are kept elsewhere already.
        self.client = share_peer(self.client, transport)
        self.server = share_local(self.server)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        restart_idle_parser(self.conn)

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        if not self.handshake_complete:  # else refused: its parser now discards what comes
            restart_parser(self.conn)
            share_scope_parts(cast(dict[str, Any], self.scope))

    def receive(self) -> Awaitable[Message]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """uvicorn's `receive` as a plain call returning a future of the next message.

        An open connection spends nearly all its life waiting here; uvicorn's coroutine and the
        queue's `get` kept two frames alive for it. Reading resumes as before (`_ReceiveQueue`).
        """
        return cast(LightQueue[Message], self.queue).take()

    def resume_if_drained(self) -> None:
        """Resume reading once the app took every queued message (the end of uvicorn's
        `receive`)."""
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            self.transport.resume_reading()

    def start_keepalive(self) -> None:
        # uvicorn calls this once, right after the accepting response left: the handshake is over.
        super().start_keepalive()
        self.request = None  # pyright: ignore[reportAttributeAccessIssue]
        self.response = None  # pyright: ignore[reportAttributeAccessIssue]


class _ReceiveQueue(LightQueue[Message]):
    """The protocol's receive queue, resuming reading as uvicorn's `receive` does.

    uvicorn pauses reading after queueing each message and resumes it once the app took the
    last one queued (its backpressure: a connection reads ahead at most one message).
    """

    __slots__ = ("_protocol",)

    def __init__(self, protocol: LeanWebSocketProtocol) -> None:
        super().__init__()
        self._protocol = protocol

    def _taken(self) -> None:
        self._protocol.resume_if_drained()

    def _handed_off(self) -> None:
        # uvicorn pauses reading right after this put returns; the reader takes the message
        # when it resumes, in the loop's next step: resume then, as its `receive` would.
        protocol = self._protocol
        protocol.loop.call_soon(protocol.resume_if_drained)

"""WebSocket writes gathered in short windows: the first frame leaves at once, the next wait.

A turn ends with several small frames (say.end, options, encounter.idle) made a few loop steps
apart; each used to be its own send() call, and a send on loopback that wakes a reader on
another core costs far more than the bytes it carries. After a write goes out, the transport
below holds further writes for a short window (or to the end of the loop step, with a window
of 0) and then passes them on together, in order. The first frame after a quiet spell, such
as a line's first say.delta, never waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, ClassVar, cast

from starlette.types import Message
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from .handshake import (
    PROTOCOL_ATTRIBUTES,
    restart_idle_parser,
    restart_parser,
    share_extensions,
    share_local,
    share_peer,
    share_scope_parts,
)
from .light_sync import LightEvent, LightQueue

_SLICE_BYTES = 4096
"""Bytes parsed at a time: at most about 500 frames (8-byte ones), a few ms of parsing."""
_BACKLOG_FRAMES = 64
"""Frames queued for the app past which bytes read are held unparsed until it takes them."""

_NO_EXTRA: dict[str, Any] = {}
"""The wrapper's own extra info, never read or written (asyncio makes an empty dict each)."""


class CoalescingTransport(asyncio.Transport):
    """Wraps a transport; writes within `hold_s` of one that went out reach it as one write."""

    __slots__ = ("_hold_s", "_inner", "_loop", "_pending", "_timer")

    def __init__(
        self, inner: asyncio.Transport, loop: asyncio.AbstractEventLoop, *, hold_s: float = 0.0
    ) -> None:
        super().__init__(_NO_EXTRA)  # its extra info is the inner transport's
        self._inner = inner
        self._loop = loop
        self._hold_s = hold_s
        self._timer: asyncio.Handle | None = None
        self._pending: list[bytes | bytearray | memoryview] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._timer is not None:
            self._pending.append(data)
            return
        self._inner.write(data)
        # Until the window closes, further writes wait and then leave together.
        if self._hold_s > 0:
            self._timer = self._loop.call_later(self._hold_s, self.flush)
        else:
            self._timer = self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Pass what is held to the socket now (a closing transport drops it, as it would)."""
        self._end_window()
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._inner.write(data)

    def _end_window(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        self.flush()
        self._inner.close()

    def abort(self) -> None:
        self._end_window()
        self._pending.clear()
        self._inner.abort()

    def write_eof(self) -> None:
        self.flush()
        self._inner.write_eof()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def is_closing(self) -> bool:
        return self._inner.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        return self._inner.get_write_buffer_size() + sum(map(len, self._pending))

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        self._inner.resume_reading()

    def is_reading(self) -> bool:
        return self._inner.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()


class CoalescingWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets (sans-I/O) protocol, writing through a CoalescingTransport.

    Lean per connection: its attributes live in slots, its receive queue and writable event are
    the light kinds, waiting to receive costs one future, the handshake (request, response,
    headers) is let go once answered, the parser is fresh between frames, and the compression
    settings, addresses and constant scope parts are shared (see `handshake.py`).
    """

    # Every attribute uvicorn's protocol sets (checked against the pinned release): in slots
    # an open connection keeps about 1.3 KB less than in an instance dict of 37 keys.
    __slots__ = (*PROTOCOL_ATTRIBUTES, "_feeding", "_held")
    hold_s: ClassVar[float] = 0.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The protocol calls only put_nowait/empty on the queue (and get, in the `receive`
        # overridden here) and set/clear/wait on the event (uvicorn is pinned to the releases
        # this was checked against).
        self.queue = _ReceiveQueue(self)  # pyright: ignore[reportAttributeAccessIssue]
        writable = LightEvent()
        writable.set()
        self.writable = writable
        share_extensions(self.conn, self.config)
        self._held = b""
        """Bytes read but not parsed yet: they wait until the frames before them are taken."""
        self._feeding = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not isinstance(transport, asyncio.Transport):
            raise TypeError(f"a WebSocket needs a stream transport, got {type(transport)!r}")
        loop = asyncio.get_running_loop()
        super().connection_made(CoalescingTransport(transport, loop, hold_s=self.hold_s))
        # uvicorn builds both addresses afresh; the same values are kept elsewhere already.
        self.client = share_peer(self.client, transport)
        self.server = share_local(self.server)

    def data_received(self, data: bytes) -> None:
        if self._held:  # reading is paused: a read already under way still lands here
            self._held += data
            return
        self._feed(data)

    def _feed(self, data: bytes) -> None:
        """Parse `data` a slice at a time; past a backlog of frames, hold the rest unparsed.

        One read can carry tens of thousands of tiny frames (about 24,000 in 256 KiB with
        compression): parsed at once they held the loop 150 ms and queued them all.
        """
        start = 0
        while start < len(data):
            super().data_received(data[start : start + _SLICE_BYTES])
            restart_idle_parser(self.conn)
            start += _SLICE_BYTES
            if start < len(data) and self.queue.qsize() >= _BACKLOG_FRAMES:
                # uvicorn paused reading when it queued them; the rest waits for their turn.
                self._held = data[start:]
                return

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
        `receive`), after the bytes held back are parsed."""
        if not (self.read_paused and self.queue.empty()):
            return
        if self._held:
            # Parsed in a step of its own, not inside the app's `receive` that took the last.
            if not self._feeding:
                self._feeding = True
                self.loop.call_soon(self._feed_held)
            return
        self.read_paused = False
        self.transport.resume_reading()

    def _feed_held(self) -> None:
        self._feeding = False
        if self.transport.is_closing():
            self._held = b""
            return
        held, self._held = self._held, b""
        self._feed(held)
        self.resume_if_drained()

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

    def __init__(self, protocol: CoalescingWebSocketProtocol) -> None:
        super().__init__()
        self._protocol = protocol

    def _taken(self) -> None:
        self._protocol.resume_if_drained()

    def _handed_off(self) -> None:
        # uvicorn pauses reading right after this put returns; the reader takes the message
        # when it resumes, in the loop's next step: resume then, as its `receive` would.
        protocol = self._protocol
        protocol.loop.call_soon(protocol.resume_if_drained)


def coalescing_protocol(hold_ms: float) -> type[CoalescingWebSocketProtocol]:
    """The protocol class for uvicorn's `ws=`, holding writes for `hold_ms` after each one."""
    if hold_ms < 0:
        raise ValueError(f"hold_ms must be >= 0, got {hold_ms}")
    return type(
        "CoalescingWebSocketProtocol",
        (CoalescingWebSocketProtocol,),
        {"__slots__": (), "hold_s": hold_ms / 1000},
    )

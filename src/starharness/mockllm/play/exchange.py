"""One request being answered: the connection, the request facts, and paced writing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from ...responder.steps import StreamShape
from ..shapes import ChunkEncoder, to_wire_bytes
from ..wire import ResponseWriter

_CHUNK_LIMIT = 64 * 1024


@dataclass(slots=True)
class Exchange:
    """What a behaviour needs to answer one chat request."""

    out: ResponseWriter
    reader: asyncio.StreamReader
    stream: bool
    model: str
    completion_id: str
    created: int
    prompt_tokens: int
    cached_tokens: int
    time_scale: float
    chars_per_token: int

    def encoder(self) -> ChunkEncoder:
        return ChunkEncoder(self.completion_id, self.created, self.model)

    async def sleep(self, milliseconds: float) -> None:
        if milliseconds > 0:
            await asyncio.sleep(milliseconds * self.time_scale / 1000)

    async def wait_for_hangup(self, milliseconds: float | None) -> None:
        """Hold the connection until the client hangs up or `milliseconds` pass (None: forever)."""
        timeout = None if milliseconds is None else milliseconds * self.time_scale / 1000
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(timeout):
                while await self.reader.read(65536):
                    pass


def encode_events(events: Sequence[str | bytes]) -> bytes:
    """Join events into one byte string (bytes events are passed through as they are)."""
    texts = [event for event in events if isinstance(event, str)]
    if len(texts) == len(events):
        return to_wire_bytes("".join(texts))
    return b"".join(e if isinstance(e, bytes) else to_wire_bytes(e) for e in events)


async def write_events(
    exchange: Exchange,
    events: Sequence[str | bytes],
    *,
    delay_ms: float = 0,
    cut_bytes: int | None = None,
) -> None:
    """Write SSE events as HTTP chunks: coalesced, one per event, or cut every `cut_bytes`."""
    out = exchange.out
    if cut_bytes is not None:
        data = encode_events(events)
        for start in range(0, len(data), cut_bytes):
            if start:
                await exchange.sleep(delay_ms)
            out.write_chunk(data[start : start + cut_bytes])
            await out.drain()
    elif delay_ms > 0:
        for index, event in enumerate(events):
            if index:
                await exchange.sleep(delay_ms)
            out.write_chunk(encode_events((event,)))
            await out.drain()
    else:
        # Nothing to pace: the caller's next drain sends head, events and end in one write.
        data = encode_events(events)
        for start in range(0, len(data), _CHUNK_LIMIT):
            out.write_chunk(data[start : start + _CHUNK_LIMIT])


async def write_streamed(
    exchange: Exchange, shape: StreamShape, events: Sequence[str | bytes]
) -> None:
    """Write events paced the way a streamed step asks."""
    await write_events(
        exchange, events, delay_ms=shape.delay_ms, cut_bytes=shape.transport_chunk_bytes
    )

"""Reading a streamed answer's body: SSE events decoded into chunks, merged per network read."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass

import httpx2

from .coalesce import merge_deltas
from .decode import DONE, ChunkDecoder
from .errors import LlmConnectionError, LlmError, ProtocolError
from .sse import SseParser
from .stall import StallGuard
from .types import StreamChunk

_DRAIN_S = 2.0


@dataclass(frozen=True, slots=True)
class DecodedRead:
    """What one read's events carried: merged chunks, whether [DONE] came, and any error."""

    chunks: list[StreamChunk]
    complete: bool
    failure: LlmError | None


def decode_events(decoder: ChunkDecoder, events: Iterable[bytes]) -> DecodedRead:
    """Decode events up to [DONE]; chunks decoded before a bad event are kept."""
    arrived: list[StreamChunk] = []
    try:
        for data in events:
            if data == DONE:
                return DecodedRead(merge_deltas(arrived), True, None)
            arrived += decoder.decode(data)
    except LlmError as exc:
        return DecodedRead(merge_deltas(arrived), False, exc)
    return DecodedRead(merge_deltas(arrived), False, None)


async def read_event_stream(
    response: httpx2.Response,
    decoder: ChunkDecoder,
    guard: StallGuard,
    *,
    idle_s: float | None,
    url_shown: str,
    timeout_error: Callable[[str], LlmError],
) -> AsyncGenerator[StreamChunk]:
    """The chunks of an event-stream body; `guard` bounds the first read and every gap after."""
    parser = SseParser()
    reads = response.aiter_bytes().__aiter__()
    batches = _event_batches(reads, parser, decoder, guard, idle_s, timeout_error)
    complete = False
    async with contextlib.aclosing(batches):
        async for events in batches:
            # Events that came in one read are merged: a chunk per read, not one per event.
            read = decode_events(decoder, events)
            for chunk in read.chunks:
                yield chunk
            if read.failure is not None:
                raise read.failure
            if read.complete:
                complete = True
                break
    if not complete and not decoder.finished:
        if decoder.events == 0:
            what = "an empty body" if parser.lines_seen == 0 else "no data events"
            raise ProtocolError(f"{url_shown} answered with {what}")
        raise LlmConnectionError(
            f"the stream from {url_shown} ended before the answer was finished"
        )
    for chunk in decoder.finish():
        yield chunk
    if complete:
        await _drain(reads, guard)


async def _event_batches(
    reads: AsyncIterator[bytes],
    parser: SseParser,
    decoder: ChunkDecoder,
    guard: StallGuard,
    idle_s: float | None,
    timeout_error: Callable[[str], LlmError],
) -> AsyncGenerator[Iterable[bytes]]:
    """The events of each network read, then those the parser held when the body ended.

    Time spent by the consumer between batches is not counted against `idle_s`.
    """
    phase = "first"
    while True:
        try:
            raw = await reads.__anext__()
        except StopAsyncIteration:
            break
        except (httpx2.HTTPError, asyncio.CancelledError) as exc:
            ours = isinstance(exc, asyncio.CancelledError) and guard.is_timeout()
            if isinstance(exc, asyncio.CancelledError) and not ours:
                raise
            if decoder.finished:
                break  # only the usage report can be missing; the answer is whole
            if ours:
                raise timeout_error(phase) from None
            raise
        guard.end()
        phase = "idle"
        yield parser.feed(raw)
        guard.begin(idle_s)
    guard.end()
    yield parser.close()


async def _drain(reads: AsyncIterator[bytes], guard: StallGuard) -> None:
    """Read what follows [DONE] (normally just the end of the body) so the connection is reused."""
    guard.begin(_DRAIN_S)
    try:
        async for _ in reads:
            guard.begin(_DRAIN_S)
    except httpx2.HTTPError:
        pass
    except asyncio.CancelledError:
        if not guard.is_timeout():
            raise
    finally:
        guard.end()

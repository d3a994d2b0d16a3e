"""Broken answers: stalls, dropped connections, bad bodies and bad events."""

from __future__ import annotations

from ...responder.steps import (
    ConnectionReset,
    EmptyBody,
    MalformedEvent,
    MalformedJson,
    Stall,
    StreamDisconnect,
    Success,
    WrongContentType,
)
from ..shapes import DONE_EVENT, completion_body
from .answers import Answer, answer_usage, content_events
from .exchange import Exchange, write_events, write_streamed

FaultStep = (
    Stall
    | ConnectionReset
    | StreamDisconnect
    | EmptyBody
    | MalformedJson
    | MalformedEvent
    | WrongContentType
)

_INVALID_UTF8 = b'"\xff\xfe mock bytes that are not UTF-8"'
_GARBAGE_LINE = "!!! mock garbage: this line is not an SSE field\n\n"


def _partial_events(exchange: Exchange, text: str, chunk_size: int) -> list[str]:
    answer = Answer(None, text, [], "stop")
    return content_events(exchange.encoder(), answer, Success(text=text, chunk_size=chunk_size))


def _partial_body(exchange: Exchange, text: str) -> bytes:
    answer = Answer(None, text, [], "stop")
    return completion_body(
        completion_id=exchange.completion_id,
        created=exchange.created,
        model=exchange.model,
        text=text,
        reasoning=None,
        tool_calls=[],
        finish_reason="stop",
        usage=answer_usage(exchange, answer),
    )


async def play_fault(exchange: Exchange, step: FaultStep) -> None:
    """Misbehave the way `step` says; the connection may be gone afterwards."""
    out = exchange.out
    match step:
        case Stall():
            await _stall(exchange, step)
        case ConnectionReset():
            out.reset()
        case StreamDisconnect():
            await _disconnect(exchange, step)
        case EmptyBody():
            default_type = "text/event-stream" if exchange.stream else "application/json"
            await out.send(step.status, b"", step.content_type or default_type)
        case WrongContentType():
            await out.send(step.status, step.body.encode("utf-8"), step.content_type)
        case MalformedJson():
            await _malformed(exchange, step, step.payload.encode("utf-8"))
        case MalformedEvent():
            await _malformed(exchange, step, _bad_event_payload(exchange, step))


async def _stall(exchange: Exchange, step: Stall) -> None:
    out = exchange.out
    if step.phase != "before_headers":
        if exchange.stream:
            out.start_stream()
            if step.phase == "mid_stream":
                await write_events(
                    exchange, _partial_events(exchange, step.partial_text, step.chunk_size)
                )
        else:
            body = _partial_body(exchange, step.partial_text)
            out.write_head_only(200, "application/json", len(body))
            if step.phase == "mid_stream":
                out.write_raw(body[: len(body) // 2])
        await out.drain()
    await exchange.wait_for_hangup(step.duration_ms)
    out.close()


async def _disconnect(exchange: Exchange, step: StreamDisconnect) -> None:
    out = exchange.out
    await exchange.sleep(step.initial_delay_ms)
    if exchange.stream:
        out.start_stream()
        await write_streamed(
            exchange, step, _partial_events(exchange, step.partial_text, step.chunk_size)
        )
    else:
        body = _partial_body(exchange, step.partial_text)
        out.write_head_only(200, "application/json", len(body))
        out.write_raw(body[: len(body) // 2])
    await out.drain()
    if step.reset:
        out.reset()
    else:
        out.close()


def _bad_event_payload(exchange: Exchange, step: MalformedEvent) -> bytes:
    if step.kind == "invalid_utf8":
        return b'{"choices":[{"index":0,"delta":{"content":' + _INVALID_UTF8 + b"}}]}"
    if step.kind == "garbage_line":
        return _GARBAGE_LINE.encode("utf-8")
    encoder_event = exchange.encoder().wrong_shape()
    return encoder_event.removeprefix("data: ").removesuffix("\n\n").encode("utf-8")


async def _malformed(
    exchange: Exchange, step: MalformedJson | MalformedEvent, payload: bytes
) -> None:
    out = exchange.out
    await exchange.sleep(step.initial_delay_ms)
    if not exchange.stream:
        await out.send(200, payload, "application/json")
        return
    events: list[str | bytes] = [*_partial_events(exchange, step.partial_text, step.chunk_size)]
    is_line = isinstance(step, MalformedEvent) and step.kind == "garbage_line"
    events.append(payload if is_line else b"data: " + payload + b"\n\n")
    if step.send_done:
        events.append(DONE_EVENT)
    out.start_stream()
    await write_streamed(exchange, step, events)
    out.end_stream()
    await out.drain()

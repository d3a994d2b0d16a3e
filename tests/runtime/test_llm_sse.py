"""The SSE parser and the chunk decoder, on bytes cut every possible way."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.llm import (
    DEEPSEEK,
    OPENAI,
    OPENAI_COMPATIBLE,
    ContextOverflowError,
    Finish,
    ProtocolError,
    RateLimitedError,
    ReasoningDelta,
    ServerError,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from starharness.runtime.llm.decode import ChunkDecoder
from starharness.runtime.llm.sse import SseParser

# Printable text without CR/LF; a data line cannot hold a line break.
_payload = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=40,
)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces: list[bytes] = []
    start = 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def _parse(pieces: list[bytes]) -> list[bytes]:
    parser = SseParser()
    events: list[bytes] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    events.extend(parser.close())
    return events


@given(
    payloads=st.lists(_payload, min_size=1, max_size=6),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    space=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_events_survive_any_chunking_and_any_line_ending(
    payloads: list[str], newline: str, space: bool, cuts: list[int]
) -> None:
    sep = " " if space else ""
    text = "".join(
        f": keep-alive{newline}event: message{newline}data:{sep}{p}{newline}{newline}"
        for p in payloads
    )
    data = text.encode()
    # Without our separator space, one leading space of the payload is taken as the separator.
    expected = [(p[1:] if not space and p.startswith(" ") else p).encode() for p in payloads]
    assert _parse(_cut(data, cuts)) == expected


@given(cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_multi_line_data_is_joined_with_newlines(cuts: list[int]) -> None:
    data = b"data: first\ndata: second\r\ndata:third\n\ndata: [DONE]\n\n"
    assert _parse(_cut(data, cuts)) == [b"first\nsecond\nthird", b"[DONE]"]


def test_a_last_event_without_its_blank_line_counts_but_a_torn_line_does_not() -> None:
    assert _parse([b"data: a\n\ndata: b\n"]) == [b"a", b"b"]
    assert _parse([b'data: a\n\ndata: {"tor']) == [b"a"]


def test_a_line_that_is_no_sse_field_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="not an SSE field"):
        SseParser().feed(b"<html>oops</html>\n")


def test_empty_body_has_no_lines() -> None:
    parser = SseParser()
    assert parser.feed(b"") == []
    assert parser.close() == []
    assert parser.lines_seen == 0


# -- the decoder -------------------------------------------------------------------------------


def _event(delta: dict[str, object] | None = None, **fields: object) -> bytes:
    choice: dict[str, object] = {"index": 0, "delta": delta or {}}
    if "finish_reason" in fields:
        choice["finish_reason"] = fields.pop("finish_reason")
    return json.dumps({"choices": [choice], **fields}).encode()


def test_text_reasoning_and_finish_with_deepseek_usage() -> None:
    decoder = ChunkDecoder(DEEPSEEK)
    chunks = [
        *decoder.decode(_event({"role": "assistant", "content": ""})),
        *decoder.decode(_event({"reasoning_content": "think", "content": None})),
        *decoder.decode(_event({"content": "Hi"})),
        *decoder.decode(
            _event(
                finish_reason="stop",
                usage={
                    "prompt_tokens": 100,
                    "completion_tokens": 7,
                    "prompt_cache_hit_tokens": 64,
                    "prompt_cache_miss_tokens": 36,
                    "completion_tokens_details": {"reasoning_tokens": 3},
                },
            )
        ),
    ]
    chunks += decoder.finish()
    assert chunks == [
        ReasoningDelta("think"),
        TextDelta("Hi"),
        Usage(input=100, output=7, cache_read=64, reasoning=3),
        Finish("stop"),
    ]


def test_openai_usage_after_finish_still_comes_before_it() -> None:
    decoder = ChunkDecoder(OPENAI)
    assert decoder.decode(_event({"content": "x"}, finish_reason="length")) == [TextDelta("x")]
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    assert decoder.decode(json.dumps({"choices": [], "usage": usage}).encode()) == []
    assert decoder.finish() == [Usage(input=50, output=1, cache_read=32), Finish("max-tokens")]


def test_tool_calls_without_index_are_told_apart_by_id() -> None:
    decoder = ChunkDecoder(OPENAI_COMPATIBLE)
    a = {"id": "a", "function": {"name": "one", "arguments": '{"x":'}}
    a_more = {"function": {"arguments": "1}"}}
    b = {"id": "b", "function": {"name": "two", "arguments": "{}"}}
    chunks = [
        *decoder.decode(_event({"tool_calls": [a]})),
        *decoder.decode(_event({"tool_calls": [a_more]})),
        *decoder.decode(_event({"tool_calls": [b]})),
    ]
    assert chunks == [
        ToolCallDelta(0, "a", "one", '{"x":'),
        ToolCallDelta(0, None, None, "1}"),
        ToolCallDelta(1, "b", "two", "{}"),
    ]
    assert decoder.finish() == [Finish("tool-calls")]


def test_second_reasoning_field_name_is_read_by_the_compatible_profile() -> None:
    decoder = ChunkDecoder(OPENAI_COMPATIBLE)
    assert decoder.decode(_event({"reasoning": "hmm"})) == [ReasoningDelta("hmm")]
    assert ChunkDecoder(OPENAI).decode(_event({"reasoning": "hmm"})) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"choices": [{"delta": {"content": "trunc', "malformed JSON"),
        (b'{"choices": "not-a-list"}', "unexpected stream event shape"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"choices":[{"delta":{"content":"\xff\xfe"}}]}', "malformed JSON"),
    ],
)
def test_bad_events_are_protocol_errors(data: bytes, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        ChunkDecoder(DEEPSEEK).decode(data)


def test_error_events_map_to_errors() -> None:
    overflow = b'{"error": {"message": "maximum context length is 10", "code": null}}'
    with pytest.raises(ContextOverflowError):
        ChunkDecoder(DEEPSEEK).decode(overflow)
    limited = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    with pytest.raises(RateLimitedError):
        ChunkDecoder(DEEPSEEK).decode(limited)
    with pytest.raises(ServerError, match="overloaded"):
        ChunkDecoder(DEEPSEEK).decode(b'{"error": "overloaded"}')


def test_a_stream_with_no_events_cannot_finish() -> None:
    with pytest.raises(ProtocolError, match="without any event"):
        ChunkDecoder(DEEPSEEK).finish()


def test_leading_whitespace_in_data_is_still_json() -> None:
    assert ChunkDecoder(DEEPSEEK).decode(b'  {"choices":[{"delta":{"content":"a"}}]} ') == [
        TextDelta("a")
    ]

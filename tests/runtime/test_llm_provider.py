"""The chat-completions provider against the real mock LLM server over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.mockllm import MockLlmServer
from starharness.runtime.llm import (
    DEEPSEEK,
    OPENAI,
    OPENAI_COMPATIBLE,
    AssistantMessage,
    AuthError,
    ContextOverflowError,
    Finish,
    InvalidRequestError,
    LlmConnectionError,
    LlmError,
    LlmRequest,
    LlmTimeoutError,
    OpenAICompatibleProvider,
    ProtocolError,
    ProviderProfile,
    QuotaExceededError,
    RateLimitedError,
    ReasoningDelta,
    ServerError,
    StreamChunk,
    TextDelta,
    Timeouts,
    ToolCall,
    ToolCallDelta,
    ToolMessage,
    ToolSchema,
    Usage,
    UserMessage,
)
from starharness.runtime.llm.wire import dumps_wire, to_wire_messages

KEY = "sk-test-5f1e8c0d9a7b"
SESSION = "session-1"


@pytest_asyncio.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer(api_key=KEY) as server:
        yield server


def _provider(
    mock: MockLlmServer,
    profile: ProviderProfile = DEEPSEEK,
    *,
    key: str | None = KEY,
    timeouts: Timeouts | None = None,
) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        profile, base_url=mock.base_url, api_key=key, model="mock-model", timeouts=timeouts
    )


def _request(
    messages: Sequence[Any] = (UserMessage("hello"),),
    session_id: str = SESSION,
    tools: Sequence[ToolSchema] = (),
) -> LlmRequest:
    return LlmRequest(
        model="mock-model",
        system="You are a test.",
        messages=list(messages),
        session_id=session_id,
        tools=tools,
    )


async def _collect(provider: OpenAICompatibleProvider, request: LlmRequest) -> list[StreamChunk]:
    try:
        return [chunk async for chunk in provider.stream(request)]
    finally:
        await provider.aclose()


def _text(chunks: Sequence[StreamChunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextDelta))


# -- successful answers ------------------------------------------------------------------------


async def test_streams_text_then_usage_then_finish(mock: MockLlmServer) -> None:
    text = "Grüße aus dem Maschinenraum! 🚀 " * 3
    # Paused writes reach the client in separate reads; each read yields its own delta.
    step = {"behaviour": "success", "text": text, "chunk_size": 3, "delay_ms": 2}
    mock.script(SESSION, [step])
    chunks = await _collect(_provider(mock), _request())
    assert _text(chunks) == text
    assert sum(isinstance(c, TextDelta) for c in chunks) > 10
    assert isinstance(chunks[-2], Usage) and chunks[-2].input > 0 and chunks[-2].output > 0
    assert chunks[-1] == Finish("stop")


async def test_events_that_arrive_together_become_one_delta(mock: MockLlmServer) -> None:
    text = "Grüße aus dem Maschinenraum! 🚀 " * 3
    mock.script(SESSION, [{"behaviour": "success", "text": text, "chunk_size": 3}])
    chunks = await _collect(_provider(mock), _request())
    deltas = [c for c in chunks if isinstance(c, TextDelta)]
    assert _text(deltas) == text
    # The unpaused answer lands in a few reads: far fewer deltas than its 33 events.
    assert len(deltas) < len(text) // 3 / 2


async def test_events_split_across_network_reads_decode_the_same(mock: MockLlmServer) -> None:
    text = "ünïcödé split at odd bytes"
    step = {"behaviour": "success", "text": text, "transport_chunk_bytes": 7, "delay_ms": 1}
    mock.script(SESSION, [step])
    assert _text(await _collect(_provider(mock), _request())) == text


async def test_reasoning_deltas_come_before_the_text(mock: MockLlmServer) -> None:
    step = {"behaviour": "reasoning_success", "reasoning": "Let me think.", "text": "Done."}
    mock.script(SESSION, [step])
    chunks = await _collect(_provider(mock), _request())
    kinds = [c.type for c in chunks]
    assert kinds.index("reasoning-delta") < kinds.index("text-delta")
    reasoning = "".join(c.text for c in chunks if isinstance(c, ReasoningDelta))
    assert reasoning == "Let me think."
    assert _text(chunks) == "Done."
    usage = next(c for c in chunks if isinstance(c, Usage))
    assert usage.reasoning > 0


async def test_parallel_tool_calls_split_into_many_fragments(mock: MockLlmServer) -> None:
    first = json.dumps({"path": 'a "quoted" \\ path', "text": "zwölf\n"})
    second = json.dumps({"n": 12})
    step = {
        "behaviour": "tool_call_success",
        "calls": [
            {"name": "write", "arguments": first, "id": "call-a"},
            {"name": "count", "arguments": second, "id": "call-b"},
        ],
        "fragment_size": 1,
        "text": "Working on it.",
        # Paused writes arrive in separate reads, so every fragment stays a delta of its own.
        "delay_ms": 1,
    }
    mock.script(SESSION, [step])
    chunks = await _collect(_provider(mock), _request())
    deltas = [c for c in chunks if isinstance(c, ToolCallDelta)]
    assert len(deltas) > len(first)
    calls: dict[int, dict[str, str]] = {}
    for delta in deltas:
        call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
        call["id"] += delta.id or ""
        call["name"] += delta.name or ""
        call["arguments"] += delta.arguments_delta
    assert calls == {
        0: {"id": "call-a", "name": "write", "arguments": first},
        1: {"id": "call-b", "name": "count", "arguments": second},
    }
    assert _text(chunks) == "Working on it."
    assert chunks[-1] == Finish("tool-calls")


async def test_max_tokens_finish(mock: MockLlmServer) -> None:
    mock.script(SESSION, ["max_tokens"])
    chunks = await _collect(_provider(mock), _request())
    assert chunks[-1] == Finish("max-tokens")


async def test_cache_hits_are_read_for_deepseek_and_openai(mock: MockLlmServer) -> None:
    for profile, session in ((DEEPSEEK, "ds"), (OPENAI, "oa")):
        mock.script(session, ["success", "success"])
        provider = _provider(mock, profile)
        history: list[Any] = [UserMessage("a long enough first question " * 4)]
        first = [c async for c in provider.stream(_request(history, session))]
        history += [AssistantMessage(text=_text(first)), UserMessage("and then?")]
        second = [c async for c in provider.stream(_request(history, session))]
        await provider.aclose()
        usage = next(c for c in second if isinstance(c, Usage))
        assert 0 < usage.cache_read < usage.input, profile.name


# -- what is sent ------------------------------------------------------------------------------


async def test_every_request_names_its_session_and_sends_the_key(mock: MockLlmServer) -> None:
    mock.script("alpha", ["success"])
    mock.script("beta", ["success"])
    provider = _provider(mock)
    for session in ("alpha", "beta"):
        [_ async for _ in provider.stream(_request(session_id=session))]
    await provider.aclose()
    assert [r.headers["x-star-harness-session"] for r in mock.requests] == ["alpha", "beta"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in mock.requests)
    assert [r.conversation for r in mock.requests] == ["alpha", "beta"]


async def test_cache_key_is_stable_per_session_where_the_profile_takes_one(
    mock: MockLlmServer,
) -> None:
    mock.script_each(["success"], repeat_last=True)
    for session in ("one", "one", "two"):
        provider = _provider(mock, OPENAI)
        await _collect(provider, _request(session_id=session))
    keys = [r.body["prompt_cache_key"] for r in mock.requests]
    assert keys[0] == keys[1] != keys[2]
    assert "one" not in keys[0]
    await _collect(_provider(mock, DEEPSEEK), _request(session_id="one"))
    assert "prompt_cache_key" not in mock.requests[-1].body


async def test_sent_messages_are_exactly_to_wire_messages(mock: MockLlmServer) -> None:
    mock.script_each(["success"], repeat_last=True)
    history = [
        UserMessage("hi"),
        AssistantMessage(
            text="", reasoning="need a tool", tool_calls=(ToolCall("c1", "look", '{"at":"x"}'),)
        ),
        ToolMessage("c1", "Error: nothing there", is_error=True),
    ]
    for profile in (DEEPSEEK, OPENAI):
        provider = _provider(mock, profile)
        request = _request(history)
        await _collect(provider, request)
        sent = mock.requests[-1].body["messages"]
        expected = to_wire_messages(request.system, history, profile=profile)
        assert dumps_wire(sent) == dumps_wire(expected)
        assert dumps_wire(expected).encode() in provider.encode(request)
        assert ("reasoning_content" in sent[2]) is (profile is DEEPSEEK)


async def test_optional_key_is_left_out_for_compatible_servers() -> None:
    async with MockLlmServer() as open_mock:
        open_mock.script(SESSION, ["success"])
        chunks = await _collect(_provider(open_mock, OPENAI_COMPATIBLE, key=None), _request())
        assert _text(chunks) == "mock response"
        assert "authorization" not in open_mock.requests[0].headers


def test_a_session_id_that_cannot_be_a_header_is_refused() -> None:
    provider = OpenAICompatibleProvider(DEEPSEEK, base_url="http://127.0.0.1:9", api_key=KEY)
    with pytest.raises(InvalidRequestError, match="HTTP header"):
        provider.stream(_request(session_id="bad\nid"))


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "error", "status"),
    [
        ({"behaviour": "rate_limit", "retry_after_s": 2.5}, RateLimitedError, 429),
        ("server_error", ServerError, 500),
        ({"behaviour": "server_error", "status": 502}, ServerError, 502),
        ("service_unavailable", ServerError, 503),
        ("auth_error", AuthError, 401),
        ("context_overflow", ContextOverflowError, 400),
        ("quota_exceeded", QuotaExceededError, 429),
        ({"behaviour": "quota_exceeded", "status": 402}, QuotaExceededError, 402),
        ("invalid_request", InvalidRequestError, 400),
        ("wrong_content_type", ProtocolError, None),
        ("empty_body", ProtocolError, None),
        ("malformed_json", ProtocolError, None),
        ({"behaviour": "malformed_json", "partial_text": "abc"}, ProtocolError, None),
        ("malformed_event", ProtocolError, None),
        ({"behaviour": "malformed_event", "kind": "invalid_utf8"}, ProtocolError, None),
        ({"behaviour": "malformed_event", "kind": "garbage_line"}, ProtocolError, None),
        ("connection_reset", LlmConnectionError, None),
        ("stream_disconnect", LlmConnectionError, None),
        ({"behaviour": "stream_disconnect", "reset": True}, LlmConnectionError, None),
        ({"behaviour": "success", "send_done": False, "text": "x"}, None, None),
    ],
)
async def test_failures_map_to_distinct_errors(
    mock: MockLlmServer, step: Any, error: type[LlmError] | None, status: int | None
) -> None:
    mock.script(SESSION, [step])
    if error is None:
        # A finished answer without [DONE] is complete: nothing is lost.
        chunks = await _collect(_provider(mock), _request())
        assert chunks[-1] == Finish("stop")
        return
    with pytest.raises(error) as caught:
        await _collect(_provider(mock), _request())
    assert type(caught.value) is error
    assert caught.value.status == status
    assert str(caught.value)
    assert caught.value.retryable is (
        error in (RateLimitedError, ServerError, ProtocolError, LlmConnectionError)
    )


async def test_retry_after_is_read_from_the_response(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "rate_limit", "retry_after_s": 2.5}])
    with pytest.raises(RateLimitedError) as caught:
        await _collect(_provider(mock), _request())
    assert caught.value.retry_after == 2.5


async def test_stream_cut_after_some_output_raises_after_the_output(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "stream_disconnect", "partial_text": "half an ans"}])
    provider = _provider(mock)
    seen: list[StreamChunk] = []
    with pytest.raises(LlmConnectionError):
        async for chunk in provider.stream(_request()):
            seen.append(chunk)
    await provider.aclose()
    assert _text(seen) == "half an ans"
    assert not any(isinstance(c, Finish) for c in seen)


async def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAICompatibleProvider(
        DEEPSEEK, base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY
    )
    with pytest.raises(LlmConnectionError, match="could not connect"):
        await _collect(provider, _request())


async def test_no_first_byte_in_time_is_a_timeout(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "stall", "phase": "before_headers"}])
    provider = _provider(mock, timeouts=Timeouts(first_byte=0.2))
    with pytest.raises(LlmTimeoutError, match="no response"):
        await _collect(provider, _request())


async def test_headers_without_a_body_in_time_is_a_timeout(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "stall", "phase": "after_headers"}])
    provider = _provider(mock, timeouts=Timeouts(first_byte=0.2, idle=30))
    with pytest.raises(LlmTimeoutError, match="no response"):
        await _collect(provider, _request())


async def test_a_stall_mid_stream_is_an_idle_timeout(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "stall", "phase": "mid_stream", "partial_text": "so"}])
    provider = _provider(mock, timeouts=Timeouts(first_byte=30, idle=0.2))
    seen: list[StreamChunk] = []
    with pytest.raises(LlmTimeoutError, match="stalled"):
        async for chunk in provider.stream(_request()):
            seen.append(chunk)
    await provider.aclose()
    assert _text(seen) == "so"


async def test_slow_but_steady_stream_is_not_an_idle_timeout(mock: MockLlmServer) -> None:
    text = "tick tock tick"
    step = {
        "behaviour": "slow_success",
        "text": text,
        "chunk_size": 1,
        "delay_ms": 100,
        "initial_delay_ms": 0,
    }
    mock.script(SESSION, [step])
    # Each gap is far below the idle limit, the whole answer (about 1.4 s) is above it.
    provider = _provider(mock, timeouts=Timeouts(first_byte=30, idle=0.8))
    assert _text(await _collect(provider, _request())) == text


async def test_cancelling_the_consumer_closes_the_response(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "stall", "phase": "mid_stream"}])
    provider = _provider(mock)
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider.stream(_request()):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The stall ends only when the client hangs up; a fresh request on the same client works.
    mock.script(SESSION, ["success"])
    assert _text(await _collect(provider, _request())) == "mock response"


# -- the key stays secret ----------------------------------------------------------------------


async def test_key_never_appears_in_repr_errors_or_logs(
    mock: MockLlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"behaviour": "invalid_request", "message": f"key {KEY} is not allowed here"}
    mock.script(SESSION, [echo, "auth_error"])
    provider = _provider(mock)
    assert KEY not in repr(provider)
    errors: list[LlmError] = []
    for _ in range(2):
        with contextlib.suppress(LlmError):
            try:
                [_ async for _ in provider.stream(_request())]
            except LlmError as exc:
                errors.append(exc)
                raise
    await provider.aclose()
    assert len(errors) == 2
    for exc in errors:
        assert KEY not in str(exc) and KEY not in repr(exc)
    assert "***" in str(errors[0])
    assert "DEEPSEEK_API_KEY" in str(errors[1])
    assert KEY not in caplog.text


async def test_idle_timeout_holds_when_each_step_runs_in_its_own_task(
    mock: MockLlmServer,
) -> None:
    mock.script(SESSION, [{"behaviour": "stall", "phase": "mid_stream", "partial_text": "so"}])
    provider = _provider(mock, timeouts=Timeouts(first_byte=30, idle=0.2))
    stream = provider.stream(_request())
    try:
        with pytest.raises(LlmTimeoutError, match="stalled"):
            while True:
                # wait_for wraps each step in a new task; the guard must follow it.
                await asyncio.wait_for(anext(stream), 10)
    finally:
        await provider.aclose()


@settings(max_examples=20, deadline=None)
@given(
    text=st.text(min_size=1, max_size=60),
    arguments=st.dictionaries(st.text(max_size=8), st.text(max_size=12), max_size=3),
    cut=st.integers(min_value=1, max_value=40),
    fragment=st.integers(min_value=1, max_value=9),
)
def test_any_answer_cut_anywhere_reassembles(
    text: str, arguments: dict[str, str], cut: int, fragment: int
) -> None:
    arguments_text = json.dumps(arguments, ensure_ascii=False)
    step = {
        "behaviour": "tool_call_success",
        "text": text,
        "calls": [{"name": "tool", "arguments": arguments_text}],
        "fragment_size": fragment,
        "transport_chunk_bytes": cut,
    }

    async def run() -> list[StreamChunk]:
        async with MockLlmServer() as server:
            server.script(SESSION, [step])
            return await _collect(_provider(server, key=None), _request())

    chunks = asyncio.run(run())
    assert _text(chunks) == text
    deltas = [c for c in chunks if isinstance(c, ToolCallDelta)]
    assert "".join(d.arguments_delta for d in deltas) == arguments_text
    assert chunks[-1] == Finish("tool-calls")

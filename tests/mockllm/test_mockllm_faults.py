"""Fault behaviours through plain httpx; after each, the server still answers."""

import asyncio
import json
from typing import Literal

import httpx
import pytest
from mockllm_client import parse_sse, post_chat, read_stream, stream_chat

from starharness.mockllm import (
    BadApiKey,
    ChatRequest,
    ContextOverflow,
    EmptyBody,
    InvalidRequest,
    MalformedEvent,
    MalformedJson,
    MockLlmServer,
    QuotaExceeded,
    RateLimit,
    ServerFault,
    ServiceUnavailable,
    Stall,
    Step,
    StreamDisconnect,
    WrongContentType,
)


async def _still_serves(mock: MockLlmServer) -> None:
    mock.script("after-fault", ["success"])
    async with httpx.AsyncClient() as fresh:
        answer = await stream_chat(fresh, mock.base_url, session="after-fault")
    assert answer.text == "mock response"


@pytest.mark.parametrize("phase", ["before_headers", "after_headers", "mid_stream"])
async def test_stall_holds_until_the_client_gives_up(
    mock_llm: MockLlmServer, phase: Literal["before_headers", "after_headers", "mid_stream"]
) -> None:
    mock_llm.script("default", [Stall(phase=phase, partial_text="so far")])
    received: list[bytes] = []

    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.2)) as client:
        with pytest.raises(httpx.ReadTimeout):
            async with client.stream(
                "POST",
                f"{mock_llm.base_url}/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
            ) as response:
                async for chunk in response.aiter_raw():
                    received.append(chunk)

    seen = b"".join(received)
    assert (b"so far" in seen) == (phase == "mid_stream")
    await _still_serves(mock_llm)


async def test_stall_with_duration_then_closes(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(time_scale=0.001) as mock:
        mock.script("default", [Stall(phase="after_headers", duration_ms=50)])

        with pytest.raises(httpx.RemoteProtocolError):
            await read_stream(http, mock.base_url)


async def test_stall_without_stream_mid_body(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(time_scale=0.001) as mock:
        mock.script("default", [Stall(phase="mid_stream", duration_ms=20)])

        with pytest.raises(httpx.RemoteProtocolError):
            await post_chat(http, mock.base_url)


async def test_server_close_ends_a_stalled_connection() -> None:
    arrived = asyncio.Event()

    def stall_and_tell(request: ChatRequest) -> Step:
        arrived.set()
        return Stall()

    mock = MockLlmServer(responder=stall_and_tell)
    await mock.start()
    async with httpx.AsyncClient(timeout=5.0) as client:
        pending = asyncio.create_task(post_chat(client, mock.base_url))
        await arrived.wait()
        await mock.close()
        with pytest.raises(httpx.TransportError):
            await pending


async def test_connection_reset(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", ["connection_reset"])

    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
        await read_stream(http, mock_llm.base_url)
    await _still_serves(mock_llm)


@pytest.mark.parametrize("reset", [False, True])
async def test_stream_disconnect_mid_answer(
    mock_llm: MockLlmServer, http: httpx.AsyncClient, reset: bool
) -> None:
    mock_llm.script("default", [StreamDisconnect(partial_text="half an ans", reset=reset)])
    received: list[bytes] = []

    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        async with http.stream(
            "POST",
            f"{mock_llm.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
        ) as response:
            async for chunk in response.aiter_raw():
                received.append(chunk)

    if not reset:
        events, done = parse_sse(b"".join(received))
        assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == (
            "half an ans"
        )
        assert not done
    await _still_serves(mock_llm)


async def test_stream_disconnect_without_stream(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", ["stream_disconnect"])

    with pytest.raises(httpx.RemoteProtocolError):
        await post_chat(http, mock_llm.base_url)


@pytest.mark.parametrize(("stream", "content_type"), [(True, "text/event-stream"), (False, "json")])
async def test_empty_body(
    mock_llm: MockLlmServer, http: httpx.AsyncClient, stream: bool, content_type: str
) -> None:
    mock_llm.script("default", [EmptyBody()])

    response = await post_chat(http, mock_llm.base_url, stream=stream)

    assert response.status_code == 200
    assert response.content == b""
    assert content_type in response.headers["content-type"]


async def test_malformed_json_event(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", [MalformedJson(partial_text="before")])

    response, raw = await read_stream(http, mock_llm.base_url)

    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        parse_sse(raw)
    assert b"before" in raw
    assert raw.endswith(b"data: [DONE]\n\n")


async def test_malformed_json_body(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", ["malformed_json"])

    response = await post_chat(http, mock_llm.base_url)

    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()


async def test_malformed_event_wrong_shape(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [MalformedEvent(kind="wrong_shape")])

    response, raw = await read_stream(http, mock_llm.base_url)

    events, done = parse_sse(raw)
    assert response.status_code == 200
    assert done
    assert events[-1]["choices"] == "not-a-list"


async def test_malformed_event_invalid_utf8(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [MalformedEvent(kind="invalid_utf8")])

    _, raw = await read_stream(http, mock_llm.base_url)

    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")


async def test_malformed_event_garbage_line(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [MalformedEvent(kind="garbage_line", partial_text="ok")])

    _, raw = await read_stream(http, mock_llm.base_url)

    lines = raw.decode().split("\n")
    assert any(line and not line.startswith("data: ") for line in lines)
    events, _ = parse_sse(raw)
    assert events[-1]["choices"][0]["delta"]["content"] == "ok"


async def test_wrong_content_type(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", [WrongContentType(body="<p>login page</p>")])

    response = await post_chat(http, mock_llm.base_url, stream=True)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.text == "<p>login page</p>"


@pytest.mark.parametrize(
    ("step", "status", "error_type", "code"),
    [
        (RateLimit(), 429, "requests", "rate_limit_exceeded"),
        (ServerFault(), 500, "server_error", None),
        (ServerFault(status=502), 502, "server_error", None),
        (ServiceUnavailable(), 503, "server_error", "service_unavailable"),
        (BadApiKey(), 401, "invalid_request_error", "invalid_api_key"),
        (InvalidRequest(code="bad_tools"), 400, "invalid_request_error", "bad_tools"),
        (ContextOverflow(), 400, "invalid_request_error", "context_length_exceeded"),
        (QuotaExceeded(), 429, "insufficient_quota", "insufficient_quota"),
        (QuotaExceeded(status=402), 402, "insufficient_quota", "insufficient_quota"),
    ],
)
async def test_provider_errors_have_the_openai_shape(
    mock_llm: MockLlmServer,
    http: httpx.AsyncClient,
    step: object,
    status: int,
    error_type: str,
    code: str | None,
) -> None:
    mock_llm.script("default", [step])  # type: ignore[list-item]

    response = await post_chat(http, mock_llm.base_url, stream=True)

    assert response.status_code == status
    error = response.json()["error"]
    assert error["type"] == error_type
    assert error["code"] == code
    assert error["message"]
    await _still_serves(mock_llm)


async def test_rate_limit_and_unavailable_carry_retry_after(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script(
        "default",
        [
            RateLimit(retry_after_s=2.5),
            ServiceUnavailable(retry_after_s=7),
            RateLimit(retry_after_s=None),
        ],
    )

    limited = await post_chat(http, mock_llm.base_url)
    unavailable = await post_chat(http, mock_llm.base_url)
    bare = await post_chat(http, mock_llm.base_url)

    assert limited.headers["retry-after"] == "3"
    assert limited.headers["retry-after-ms"] == "2500"
    assert unavailable.headers["retry-after"] == "7"
    assert "retry-after" not in bare.headers


async def test_context_overflow_names_the_limit_and_the_request_size(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [ContextOverflow(max_context_tokens=10)])
    long_message = [{"role": "user", "content": "w" * 400}]

    error = (await post_chat(http, mock_llm.base_url, messages=long_message)).json()["error"]

    assert "maximum context length is 10 tokens" in error["message"]
    assert error["param"] == "messages"
    prompt_tokens = int(error["message"].split("you requested ")[1].split(" ")[0])
    assert prompt_tokens > 100

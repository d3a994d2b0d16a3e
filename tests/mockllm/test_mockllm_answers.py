"""Successful behaviours through plain httpx: text, reasoning, tool calls, length, pacing."""

import json

import httpx
from mockllm_client import parse_sse, post_chat, stream_chat

from starharness.mockllm import (
    MaxTokens,
    MockLlmServer,
    ReasoningSuccess,
    ScriptedCall,
    SlowSuccess,
    Success,
    ToolCalls,
)


async def test_success_streams_text_in_chunks_of_code_points(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    text = "Grüße aus der Station 🚀, willkommen!"
    mock_llm.script("default", [Success(text=text, chunk_size=5)])

    answer = await stream_chat(http, mock_llm.base_url)

    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.text == text
    pieces = answer.pieces("content")
    assert pieces == [text[i : i + 5] for i in range(0, len(text), 5)]
    assert answer.deltas()[0]["role"] == "assistant"
    assert answer.finish_reason == "stop"
    assert answer.done


async def test_success_without_stream_is_one_completion(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [Success(text="just once")])

    response = await post_chat(http, mock_llm.base_url)

    body = response.json()
    assert response.status_code == 200
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "just once"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["completion_tokens"] == 3  # 9 characters at 4 per token


async def test_model_name_is_echoed(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", ["success"])

    answer = await stream_chat(http, mock_llm.base_url, model="deepseek-chat")

    assert {event["model"] for event in answer.events} == {"deepseek-chat"}


async def test_reasoning_comes_before_text(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script(
        "default",
        [
            ReasoningSuccess(reasoning="think first", text="then speak", chunk_size=4),
            ReasoningSuccess(reasoning="hidden", text="shown"),
        ],
    )

    answer = await stream_chat(http, mock_llm.base_url)
    completion = (await post_chat(http, mock_llm.base_url)).json()

    assert answer.reasoning == "think first"
    assert answer.text == "then speak"
    kinds = [next(iter(d)) for d in answer.deltas()[1:] if d]
    assert kinds == ["reasoning_content"] * 3 + ["content"] * 3
    assert answer.usage["completion_tokens_details"]["reasoning_tokens"] == 3
    assert completion["choices"][0]["message"]["reasoning_content"] == "hidden"
    assert completion["choices"][0]["message"]["content"] == "shown"


async def test_tool_calls_stream_ids_names_and_fragmented_arguments(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    first = '{"line": "Sag \\"hallo\\" \\u00e9 — 你好"}'
    second = {"amount": 3, "item": "fuel"}
    step = ToolCalls(
        text="Let me check.",
        calls=[
            ScriptedCall(name="speak", arguments=first, id="call_speak"),
            ScriptedCall(name="trade", arguments=json.dumps(second)),
        ],
        fragment_size=3,
    )
    mock_llm.script("default", [step])

    answer = await stream_chat(http, mock_llm.base_url)

    calls = answer.tool_calls()
    assert [call["name"] for call in calls] == ["speak", "trade"]
    assert calls[0]["id"] == "call_speak"
    assert calls[1]["id"].startswith("call_")
    assert calls[0]["arguments"] == first
    assert json.loads(calls[1]["arguments"]) == second
    assert answer.text == "Let me check."
    assert answer.finish_reason == "tool_calls"
    fragments = [
        part["function"]["arguments"]
        for delta in answer.deltas()
        for part in delta.get("tool_calls", [])
        if part["index"] == 0 and "id" not in part
    ]
    assert fragments == [first[i : i + 3] for i in range(0, len(first), 3)]


async def test_tool_call_fragments_can_split_inside_escapes(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    arguments = '{"a":"\\u00e9\\""}'
    cut_in_unicode_escape = arguments.index("\\u") + 3
    cut_in_quote_escape = arguments.index('\\"') + 1
    step = ToolCalls(
        calls=[ScriptedCall(name="speak", arguments=arguments)],
        fragment_splits=(cut_in_unicode_escape, cut_in_quote_escape),
    )
    mock_llm.script("default", [step])

    answer = await stream_chat(http, mock_llm.base_url)

    fragments = [
        part["function"]["arguments"]
        for delta in answer.deltas()
        for part in delta.get("tool_calls", [])
        if "id" not in part
    ]
    assert fragments == ['{"a":"\\u0', "0e9\\", '""}']
    assert "".join(fragments) == arguments


async def test_tool_calls_without_stream(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    mock_llm.script("default", [ToolCalls(calls=[ScriptedCall(name="look", arguments="{}")])])

    message = (await post_chat(http, mock_llm.base_url)).json()["choices"][0]

    assert message["finish_reason"] == "tool_calls"
    assert message["message"]["content"] is None
    call = message["message"]["tool_calls"][0]
    assert call["type"] == "function"
    assert call["function"] == {"name": "look", "arguments": "{}"}


async def test_max_tokens_finishes_with_length(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [MaxTokens(text="cut o"), "max_tokens"])

    answer = await stream_chat(http, mock_llm.base_url)
    completion = (await post_chat(http, mock_llm.base_url)).json()

    assert answer.text == "cut o"
    assert answer.finish_reason == "length"
    assert completion["choices"][0]["finish_reason"] == "length"


async def test_slow_success_still_delivers_every_event(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(time_scale=0.01) as mock:
        mock.script("default", [SlowSuccess(text="slowly but surely", chunk_size=2)])

        answer = await stream_chat(http, mock.base_url)

    assert answer.text == "slowly but surely"
    assert answer.done


async def test_stream_can_end_without_done(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [Success(text="no terminator", send_done=False)])

    answer = await stream_chat(http, mock_llm.base_url)

    assert answer.text == "no terminator"
    assert not answer.done
    assert answer.finish_reason == "stop"


async def test_transport_cuts_split_events_and_characters_across_writes(
    http: httpx.AsyncClient,
) -> None:
    text = "ééé😀😀 cut everywhere"
    async with MockLlmServer(time_scale=0.001) as mock:
        mock.script(
            "default", [Success(text=text, chunk_size=3, transport_chunk_bytes=3, delay_ms=1)]
        )
        writes: list[bytes] = []
        async with http.stream(
            "POST",
            f"{mock.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
        ) as response:
            writes = [chunk async for chunk in response.aiter_raw()]

    raw = b"".join(writes)

    events, done = parse_sse(raw)
    streamed = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    assert streamed == text
    assert done
    # Several network reads, at least one of which ends inside a multi-byte character.
    assert len(writes) > 1
    undecodable = 0
    for piece in writes:
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError:
            undecodable += 1
    assert undecodable > 0


async def test_usage_is_in_the_final_chunk(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [Success(text="x" * 40)])

    answer = await stream_chat(http, mock_llm.base_url)

    final = answer.events[-1]
    assert final["choices"][0]["finish_reason"] == "stop"
    usage = final["usage"]
    assert usage["completion_tokens"] == 10
    assert usage["total_tokens"] == usage["prompt_tokens"] + 10
    assert (
        usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"]
        == (usage["prompt_tokens"])
    )
    assert usage["prompt_tokens_details"]["cached_tokens"] == usage["prompt_cache_hit_tokens"]
    assert all("usage" not in event for event in answer.events[:-1])

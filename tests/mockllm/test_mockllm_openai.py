"""The official `openai` client works against the mock unchanged."""

import json
from collections.abc import AsyncIterator

import openai
import pytest
import pytest_asyncio
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from starharness.mockllm import (
    ContextOverflow,
    MockLlmServer,
    ReasoningSuccess,
    ScriptedCall,
    Success,
    ToolCalls,
)

KEY = "sk-mock-test"
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hello, quartermaster."}]
TOOLS: list[ChatCompletionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "trade",
            "description": "Trade an item.",
            "parameters": {"type": "object", "properties": {"item": {"type": "string"}}},
        },
    }
]


@pytest_asyncio.fixture
async def keyed_mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer(api_key=KEY) as mock:
        yield mock


@pytest_asyncio.fixture
async def client(keyed_mock: MockLlmServer) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=keyed_mock.base_url, api_key=KEY, max_retries=0, timeout=5.0
    ) as client:
        yield client


async def test_streaming_text(keyed_mock: MockLlmServer, client: openai.AsyncOpenAI) -> None:
    keyed_mock.script("default", [Success(text="Welcome aboard, traveller.", chunk_size=4)])

    stream = await client.chat.completions.create(
        model="deepseek-chat",
        messages=USER,
        stream=True,
    )
    pieces: list[str] = []
    finish = None
    usage = None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        usage = chunk.usage or usage

    assert "".join(pieces) == "Welcome aboard, traveller."
    assert finish == "stop"
    assert usage is not None
    assert usage.completion_tokens == 7
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert (usage.model_extra or {})["prompt_cache_miss_tokens"] == usage.prompt_tokens


async def test_non_streaming_text(keyed_mock: MockLlmServer, client: openai.AsyncOpenAI) -> None:
    keyed_mock.script("default", [Success(text="One piece.")])

    completion = await client.chat.completions.create(model="m", messages=USER)

    assert completion.choices[0].message.content == "One piece."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None


async def test_streaming_tool_calls(keyed_mock: MockLlmServer, client: openai.AsyncOpenAI) -> None:
    arguments = json.dumps({"item": "fuel cell ⚡", "note": 'say "hi"'})
    keyed_mock.script(
        "default",
        [ToolCalls(calls=[ScriptedCall(name="trade", arguments=arguments)], fragment_size=2)],
    )

    stream = await client.chat.completions.create(
        model="m",
        messages=USER,
        tools=TOOLS,
        stream=True,
    )
    names: list[str] = []
    collected = ""
    finish = None
    async for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            assert call.function is not None
            if call.function.name:
                names.append(call.function.name)
            collected += call.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish

    assert names == ["trade"]
    assert collected == arguments
    assert finish == "tool_calls"


async def test_non_streaming_tool_calls(
    keyed_mock: MockLlmServer, client: openai.AsyncOpenAI
) -> None:
    keyed_mock.script(
        "default",
        [
            ToolCalls(
                calls=[
                    ScriptedCall(name="trade", arguments=json.dumps({"item": "ore"}), id="call_1")
                ]
            )
        ],
    )

    completion = await client.chat.completions.create(
        model="m",
        messages=USER,
        tools=TOOLS,
    )

    calls = completion.choices[0].message.tool_calls
    assert calls is not None
    assert calls[0].id == "call_1"
    assert calls[0].function.name == "trade"  # type: ignore[union-attr]
    assert json.loads(calls[0].function.arguments) == {"item": "ore"}  # type: ignore[union-attr]
    assert completion.choices[0].finish_reason == "tool_calls"


async def test_stream_helper_accumulates_tool_calls(
    keyed_mock: MockLlmServer, client: openai.AsyncOpenAI
) -> None:
    keyed_mock.script(
        "default",
        [
            ToolCalls(
                calls=[ScriptedCall(name="trade", arguments='{"item":"é\\u00e9"}')], fragment_size=1
            )
        ],
    )

    async with client.chat.completions.stream(
        model="m",
        messages=USER,
        tools=TOOLS,
    ) as stream:
        final = await stream.get_final_completion()

    calls = final.choices[0].message.tool_calls
    assert calls is not None
    assert calls[0].function.arguments == '{"item":"é\\u00e9"}'  # type: ignore[union-attr]


async def test_reasoning_content_is_an_extra_field(
    keyed_mock: MockLlmServer, client: openai.AsyncOpenAI
) -> None:
    keyed_mock.script("default", [ReasoningSuccess(reasoning="hmm", text="yes")])

    stream = await client.chat.completions.create(
        model="m",
        messages=USER,
        stream=True,
    )
    reasoning = ""
    text = ""
    async for chunk in stream:
        delta = chunk.choices[0].delta
        reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
        text += delta.content or ""

    assert (reasoning, text) == ("hmm", "yes")


async def test_errors_map_to_client_exceptions(
    keyed_mock: MockLlmServer, client: openai.AsyncOpenAI
) -> None:
    keyed_mock.script(
        "default", ["rate_limit", ContextOverflow(), "quota_exceeded", "service_unavailable"]
    )

    with pytest.raises(openai.RateLimitError):
        await client.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.BadRequestError) as overflow:
        await client.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.RateLimitError) as quota:
        await client.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="m", messages=USER)

    assert overflow.value.code == "context_length_exceeded"
    assert quota.value.code == "insufficient_quota"


async def test_wrong_key_is_refused(keyed_mock: MockLlmServer) -> None:
    keyed_mock.script("default", ["success"])
    async with openai.AsyncOpenAI(
        base_url=keyed_mock.base_url, api_key="sk-wrong", max_retries=0
    ) as wrong:
        with pytest.raises(openai.AuthenticationError) as refused:
            await wrong.chat.completions.create(model="m", messages=USER)

    assert refused.value.code == "invalid_api_key"
    assert keyed_mock.requests[-1].error is not None
    with pytest.raises(AssertionError):
        keyed_mock.assert_complete()  # the refused request did not consume the step


async def test_models_list(client: openai.AsyncOpenAI) -> None:
    page = await client.models.list()

    assert [model.id for model in page.data] == ["mock-model"]


async def test_session_header_routes_openai_requests(
    keyed_mock: MockLlmServer, client: openai.AsyncOpenAI
) -> None:
    keyed_mock.script("npc-a", [Success(text="from a")])
    keyed_mock.script("npc-b", [Success(text="from b")])

    b = await client.chat.completions.create(
        model="m",
        messages=USER,
        extra_headers={"X-Star-Harness-Session": "npc-b"},
    )
    a = await client.chat.completions.create(
        model="m",
        messages=USER,
        extra_headers={"X-Star-Harness-Session": "npc-a"},
    )

    assert (a.choices[0].message.content, b.choices[0].message.content) == ("from a", "from b")
    keyed_mock.assert_complete()

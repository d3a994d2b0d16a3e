"""Conversations: header routing, isolation, next-new binding, exhaustion, responders, records."""

import asyncio
import json

import httpx
import pytest
from mockllm_client import SESSION, post_chat, stream_chat

from starharness.mockllm import (
    ChatRequest,
    MockLlmServer,
    ScriptedCall,
    Step,
    Success,
    ToolCalls,
)


def _text(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


async def test_concurrent_conversations_never_take_each_others_steps(
    http: httpx.AsyncClient,
) -> None:
    conversations = [f"npc-{n}" for n in range(12)]
    async with MockLlmServer(time_scale=0.001) as mock:
        for name in conversations:
            # Delays make the streams interleave on the server.
            mock.script(
                name,
                [
                    Success(text=f"{name} turn {turn}", chunk_size=2, delay_ms=1)
                    for turn in range(3)
                ],
            )

        async def converse(name: str) -> list[str]:
            return [(await stream_chat(http, mock.base_url, session=name)).text for _ in range(3)]

        results = await asyncio.gather(*(converse(name) for name in conversations))

        mock.assert_complete()
    for name, texts in zip(conversations, results, strict=True):
        assert texts == [f"{name} turn {turn}" for turn in range(3)]


async def test_requests_without_the_header_go_to_default(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("default", [Success(text="default one")])
    mock_llm.script("other", [Success(text="other one")])

    answer = await post_chat(http, mock_llm.base_url)

    assert _text(answer) == "default one"
    assert mock_llm.requests[-1].conversation == "default"
    with pytest.raises(AssertionError, match="'other'"):
        mock_llm.assert_complete()


async def test_next_new_conversation_claims_the_oldest_queued_script(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("known", [Success(text="known"), Success(text="known again")])
    mock_llm.script_next([Success(text="first queued a"), Success(text="first queued b")])
    mock_llm.script_next([Success(text="second queued")])

    known = await post_chat(http, mock_llm.base_url, session="known")
    new_one = await post_chat(http, mock_llm.base_url, session="new-1")
    new_two = await post_chat(http, mock_llm.base_url, session="new-2")
    new_one_again = await post_chat(http, mock_llm.base_url, session="new-1")
    known_again = await post_chat(http, mock_llm.base_url, session="known")

    assert [_text(r) for r in (known, new_one, new_two, new_one_again, known_again)] == [
        "known",
        "first queued a",
        "second queued",
        "first queued b",
        "known again",
    ]
    mock_llm.assert_complete()


async def test_unclaimed_queued_script_fails_assert_complete(mock_llm: MockLlmServer) -> None:
    mock_llm.script_next(["success", "success"])

    with pytest.raises(AssertionError, match="never claimed"):
        mock_llm.assert_complete()


async def test_script_each_gives_every_conversation_its_own_copy(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script_each([Success(text="hello"), Success(text="goodbye")])

    texts = [
        _text(await post_chat(http, mock_llm.base_url, session=session))
        for session in ("a", "b", "a", "b")
    ]

    assert texts == ["hello", "hello", "goodbye", "goodbye"]
    mock_llm.assert_complete()


async def test_script_calls_append_to_a_conversation(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("s", [Success(text="one")])
    assert _text(await post_chat(http, mock_llm.base_url, session="s")) == "one"
    mock_llm.script("s", [Success(text="two")])

    assert _text(await post_chat(http, mock_llm.base_url, session="s")) == "two"


async def test_exhausted_script_is_a_500_naming_the_conversation(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("npc-7", ["success"])

    await post_chat(http, mock_llm.base_url, session="npc-7")
    exhausted = await post_chat(http, mock_llm.base_url, session="npc-7")

    assert exhausted.status_code == 500
    error = exhausted.json()["error"]
    assert error["code"] == "mock_script_exhausted"
    assert "'npc-7'" in error["message"]
    assert mock_llm.requests[-1].error == error["message"]


async def test_unscripted_conversation_without_responder_is_a_clear_500(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    response = await post_chat(http, mock_llm.base_url, session="stranger")

    assert response.status_code == 500
    assert response.json()["error"]["code"] == "mock_no_script"
    assert "'stranger'" in response.json()["error"]["message"]


async def test_repeat_last_repeats_the_final_step(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(repeat_last=True) as mock:
        mock.script("default", [Success(text="first"), Success(text="again")])
        mock.script("strict", [Success(text="only")], repeat_last=False)

        texts = [_text(await post_chat(http, mock.base_url)) for _ in range(4)]
        await post_chat(http, mock.base_url, session="strict")
        strict = await post_chat(http, mock.base_url, session="strict")

    assert texts == ["first", "again", "again", "again"]
    assert strict.status_code == 500


async def test_sync_responder_sees_the_parsed_request(http: httpx.AsyncClient) -> None:
    seen: list[ChatRequest] = []

    def brain(request: ChatRequest) -> Step:
        seen.append(request)
        if "trade" in request.tool_names() and request.last_message.role == "user":
            return ToolCalls(
                calls=[ScriptedCall(name="trade", arguments=json.dumps({"item": "ore"}))]
            )
        return Success(text=f"you said: {request.last_user_text()}")

    tools = [{"type": "function", "function": {"name": "trade", "parameters": {}}}]
    async with MockLlmServer(responder=brain) as mock:
        first = await stream_chat(
            http,
            mock.base_url,
            session="merchant",
            messages=[{"role": "user", "content": "sell me ore"}],
            tools=tools,
        )
        second = await post_chat(
            http,
            mock.base_url,
            session="merchant",
            messages=[
                {"role": "user", "content": "sell me ore"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "trade", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
            tools=tools,
            tool_choice="auto",
        )

    assert first.tool_calls()[0]["name"] == "trade"
    assert _text(second) == "you said: sell me ore"
    assert [r.conversation for r in seen] == ["merchant", "merchant"]
    assert [r.turn for r in seen] == [0, 1]
    assert seen[0].stream and not seen[1].stream
    assert seen[1].tool_choice == "auto"
    assert seen[1].messages[1].tool_calls is not None
    assert seen[1].messages[1].tool_calls[0].function.name == "trade"
    assert seen[1].messages[2].tool_call_id == "c1"
    assert seen[1].headers[SESSION.lower()] == "merchant"


async def test_async_responder_and_scripts_together(http: httpx.AsyncClient) -> None:
    async def brain(request: ChatRequest) -> Step:
        await asyncio.sleep(0)
        return Success(text=f"responder for {request.conversation}")

    async with MockLlmServer(responder=brain) as mock:
        mock.script("scripted", [Success(text="from script")])

        scripted = await post_chat(http, mock.base_url, session="scripted")
        free = await post_chat(http, mock.base_url, session="free")

    assert _text(scripted) == "from script"
    assert _text(free) == "responder for free"


async def test_failing_responder_is_a_500_and_the_server_lives_on(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    calls = 0

    def brain(request: ChatRequest) -> Step:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyError("no such npc")
        if calls == 2:
            return "not a step"  # type: ignore[return-value]
        return Success(text="recovered")

    async with MockLlmServer(responder=brain) as mock:
        raised = await post_chat(http, mock.base_url)
        wrong = await post_chat(http, mock.base_url)
        fine = await post_chat(http, mock.base_url)

    assert raised.status_code == 500
    assert raised.json()["error"]["code"] == "mock_responder_failed"
    assert "KeyError" in raised.json()["error"]["message"]
    assert "returned str" in wrong.json()["error"]["message"]
    assert _text(fine) == "recovered"
    assert "no such npc" in caplog.text


async def test_every_request_is_recorded(mock_llm: MockLlmServer, http: httpx.AsyncClient) -> None:
    step = Success(text="noted")
    mock_llm.script("rec", [step])

    await post_chat(http, mock_llm.base_url, session="rec", temperature=0.5)
    await http.get(f"{mock_llm.base_url}/models")
    await http.get(f"{mock_llm.origin}/nowhere")

    chat, models, missing = mock_llm.requests
    assert (chat.method, chat.path, chat.conversation) == ("POST", "/v1/chat/completions", "rec")
    assert chat.headers[SESSION.lower()] == "rec"
    assert chat.body["temperature"] == 0.5
    assert chat.messages == [{"role": "user", "content": "hi"}]
    assert chat.step == step
    assert chat.error is None
    assert (models.method, models.path, models.conversation) == ("GET", "/v1/models", None)
    assert missing.error is not None
    assert mock_llm.requests_for("rec") == [chat]


async def test_assert_complete_names_every_unfinished_conversation(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script("done", ["success"])
    mock_llm.script("half", ["success", "success"])
    mock_llm.script("untouched", ["success"])
    await post_chat(http, mock_llm.base_url, session="done")
    await post_chat(http, mock_llm.base_url, session="half")

    with pytest.raises(AssertionError) as failure:
        mock_llm.assert_complete()

    message = str(failure.value)
    assert "'half': played 1 of 2" in message
    assert "'untouched': played 0 of 1" in message
    assert "'done'" not in message


async def test_keep_requests_holds_only_the_latest(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(keep_requests=2) as mock:
        mock.script_each([Success(text="ok")], repeat_last=True)
        for name in ("a", "b", "c"):
            await post_chat(http, mock.base_url, session=name)
        assert [r.conversation for r in mock.requests] == ["b", "c"]
    async with MockLlmServer(keep_requests=0) as mock:
        mock.script_each([Success(text="ok")], repeat_last=True)
        assert _text(await post_chat(http, mock.base_url, session="a")) == "ok"
        assert mock.requests == []
    with pytest.raises(ValueError, match="keep_requests must be 0 or more"):
        MockLlmServer(keep_requests=-1)
    with pytest.raises(ValueError, match="keep_conversations must be at least 1"):
        MockLlmServer(keep_conversations=0)


async def test_keep_conversations_forgets_the_least_recently_used(
    http: httpx.AsyncClient,
) -> None:
    turns: list[tuple[str, int]] = []

    def brain(request: ChatRequest) -> Step:
        turns.append((request.conversation, request.turn))
        return Success(text="ok")

    async with MockLlmServer(responder=brain, keep_conversations=2) as mock:
        mock.script("named", [Success(text="named one"), Success(text="named two")])
        assert _text(await post_chat(http, mock.base_url, session="named")) == "named one"
        for name in ("a", "b", "a", "c"):  # "b" is now the least recently used: forgotten
            await post_chat(http, mock.base_url, session=name)
        assert mock.conversation_count == 3  # "a", "c" and the named one, which is never forgotten
        for name in ("a", "b"):
            await post_chat(http, mock.base_url, session=name)
        assert _text(await post_chat(http, mock.base_url, session="named")) == "named two"
    # "a" kept its turn count; "b" came back as a new conversation ("c" made way for it).
    assert turns == [("a", 0), ("b", 0), ("a", 1), ("c", 0), ("a", 2), ("b", 0)]

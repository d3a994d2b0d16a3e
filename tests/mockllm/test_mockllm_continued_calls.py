"""The mock playing a server that continues a forced call the request began (`models
serve-local`): the responder never sees the begun call, and the answer's first string begins
with it."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, ToolCalls
from starharness.mockllm.capabilities import FULL, LLAMA_CPP, continued

FORCED = {"type": "function", "function": {"name": "say"}}
TOOLS = [{"type": "function", "function": {"name": "say", "parameters": {"type": "object"}}}]


@given(st.text(max_size=20), st.text(max_size=20), st.booleans())
def test_a_continued_call_begins_with_the_begun_text_and_stays_json(
    given_words: str, own_words: str, more: bool
) -> None:
    begun = '{"line":' + json.dumps(given_words, ensure_ascii=False)[:-1]
    fields: dict[str, Any] = {"line": own_words, **({"mood": "calm"} if more else {})}
    answer = continued(begun, json.dumps(fields))
    assert answer.startswith(begun)
    line = json.loads(answer)["line"]
    assert line == (f"{given_words} {own_words}" if own_words else given_words)


def test_what_cannot_be_read_as_a_continuation_is_left_as_it_is() -> None:
    assert continued('{"line":"Hi', "not json") == "not json"
    assert continued("not json", '{"line":"x"}') == '{"line":"x"}'
    assert continued('{"n":1', '{"n":2}') == '{"n":2}'


async def _answer(plays: Any, seen: list[ChatRequest]) -> dict[str, Any]:
    def responder(request: ChatRequest) -> ToolCalls:
        seen.append(request)
        return ToolCalls(calls=[ScriptedCall(name="say", arguments='{"line":"Fresh today."}')])

    begun = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "b",
                "type": "function",
                "function": {"name": "say", "arguments": '{"line":"Two'},
            }
        ],
    }
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "Bread?"}, begun],
        "tools": TOOLS,
        "tool_choice": FORCED,
        "stream": False,
    }
    async with MockLlmServer(responder=responder, plays=plays) as mock, httpx.AsyncClient() as http:
        answer = await http.post(f"{mock.base_url}/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()["choices"][0]["message"]["tool_calls"][0]["function"]


async def test_the_llama_cpp_mock_continues_the_begun_call_others_do_not() -> None:
    seen: list[ChatRequest] = []
    call = await _answer(LLAMA_CPP, seen)
    assert json.loads(call["arguments"])["line"] == "Two Fresh today."
    assert [m.role for m in seen[0].messages] == ["user"]
    seen.clear()
    call = await _answer(FULL, seen)
    assert json.loads(call["arguments"])["line"] == "Fresh today."
    assert [m.role for m in seen[0].messages] == ["user", "assistant"]

"""The offline brain's mock: bounded, so a keyless server can run for days."""

from __future__ import annotations

import httpx

from starharness.mockllm import (
    SERVING_KEEP_CONVERSATIONS,
    SESSION_HEADER,
    ChatRequest,
    Step,
    Success,
)
from starharness.offline import OFFLINE_MODEL, offline_mock


def _answer(request: ChatRequest) -> Step:
    return Success(text=f"turn {request.turn}")


async def test_the_offline_mock_keeps_no_records_and_a_bounded_set_of_conversations() -> None:
    mock = offline_mock(_answer)
    body = {"model": OFFLINE_MODEL, "messages": [{"role": "user", "content": "hello"}]}
    async with mock, httpx.AsyncClient(base_url=mock.base_url, trust_env=False) as http:
        for number in range(SERVING_KEEP_CONVERSATIONS + 5):
            headers = {SESSION_HEADER: f"encounter-{number}"}
            answer = await http.post("/chat/completions", json=body, headers=headers)
            assert answer.json()["choices"][0]["message"]["content"] == "turn 0"
        assert mock.requests == []
        assert mock.conversation_count == SERVING_KEEP_CONVERSATIONS
        # The latest conversation is still known: its next request is its second turn.
        headers = {SESSION_HEADER: f"encounter-{SERVING_KEEP_CONVERSATIONS + 4}"}
        answer = await http.post("/chat/completions", json=body, headers=headers)
        assert answer.json()["choices"][0]["message"]["content"] == "turn 1"

"""ScriptedProvider plays the mock's steps in-process as the real provider hears them over HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from stack_support import scripted_llm
from starharness.mockllm import (
    BadApiKey,
    ContextOverflow,
    MaxTokens,
    MockLlmServer,
    QuotaExceeded,
    RateLimit,
    ReasoningSuccess,
    ServerFault,
    StepLike,
    StreamDisconnect,
    Success,
    ToolCalls,
)
from starharness.mockllm import ScriptedCall as MockCall
from starharness.runtime.llm import (
    DEEPSEEK,
    LLM,
    Finish,
    LlmError,
    LlmRequest,
    OpenAICompatibleProvider,
    StreamChunk,
    UserMessage,
)
from starharness.runtime.loop import AGENTS
from starharness.runtime.loop.step import StepAccumulator
from starharness.runtime.session import event_types as ev
from starharness.runtime.testing import ScriptedProvider, ScriptExhaustedError
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool

SESSION = "scripted-1"

_ANSWERS: list[StepLike] = [
    Success(text="Hello there, traveller; the dock is that way."),
    MaxTokens(text="cut off in the mid"),
    ReasoningSuccess(reasoning="think first", text="then answer"),
    ToolCalls(
        calls=[
            MockCall(name="look", arguments='{"at": "the \\"north\\" door"}'),
            MockCall(name="say", arguments='{"line": "ünïcode ok"}', id="c2"),
        ],
        text="let me check",
        fragment_size=3,
    ),
]
_FAILURES: list[StepLike] = [
    RateLimit(retry_after_s=2),
    ServerFault(status=502),
    BadApiKey(),
    ContextOverflow(),
    QuotaExceeded(),
    StreamDisconnect(partial_text="half a"),
]


def _request() -> LlmRequest:
    return LlmRequest(model="m", system="s", messages=[UserMessage("hi")], session_id=SESSION)


async def _fold(chunks: Sequence[StreamChunk]) -> tuple[Any, ...]:
    acc = StepAccumulator()
    for chunk in chunks:
        acc.add(chunk)
    message = acc.message()
    calls = tuple((c.name, c.arguments) for c in message.tool_calls)
    return message.text, message.reasoning, calls, acc.finish


async def _over_http(mock: MockLlmServer, step: StepLike) -> list[StreamChunk] | LlmError:
    mock.script(SESSION, [step])
    provider = OpenAICompatibleProvider(DEEPSEEK, base_url=mock.base_url, api_key="sk-x", model="m")
    chunks: list[StreamChunk] = []
    try:
        async for chunk in provider.stream(_request()):
            chunks.append(chunk)
    except LlmError as exc:
        return exc
    finally:
        await provider.aclose()
    return chunks


async def _in_process(step: StepLike) -> list[StreamChunk] | LlmError:
    provider = ScriptedProvider([step])
    chunks: list[StreamChunk] = []
    try:
        async for chunk in provider.stream(_request()):
            chunks.append(chunk)
    except LlmError as exc:
        return exc
    return chunks


@pytest.mark.parametrize("step", _ANSWERS, ids=lambda s: getattr(s, "behaviour", "?"))
async def test_an_answer_folds_to_the_same_message_as_over_http(
    mock_llm: MockLlmServer, step: StepLike
) -> None:
    heard = await _over_http(mock_llm, step)
    played = await _in_process(step)
    assert not isinstance(heard, LlmError) and not isinstance(played, LlmError)
    assert await _fold(played) == await _fold(heard)


@pytest.mark.parametrize("step", _FAILURES, ids=lambda s: getattr(s, "behaviour", "?"))
async def test_a_failure_raises_the_same_error_as_over_http(
    mock_llm: MockLlmServer, step: StepLike
) -> None:
    heard = await _over_http(mock_llm, step)
    played = await _in_process(step)
    assert isinstance(heard, LlmError) and isinstance(played, LlmError)
    assert type(played) is type(heard)
    assert played.retryable == heard.retryable
    assert played.retry_after == heard.retry_after


async def test_steps_are_played_in_order_and_a_missing_step_is_an_error() -> None:
    provider = ScriptedProvider([{"behaviour": "success", "text": "one"}])
    chunks = [c async for c in provider.stream(_request())]
    assert isinstance(chunks[-1], Finish)
    with pytest.raises(ScriptExhaustedError, match="has no step left"):
        _ = [c async for c in provider.stream(_request())]
    assert len(provider.requests) == 2


async def test_a_tool_using_turn_runs_in_process(make_runtime: Any) -> None:
    """The whole loop, no socket: a tool call, its result, then the answer."""
    steps = [
        ToolCalls(calls=[MockCall(name="echo", arguments='{"text": "ping"}')]),
        {"behaviour": "success", "text": "done: ping"},
    ]

    class EchoArgs(BaseModel):
        text: str

    async def echo(args: EchoArgs, run: ToolRunContext) -> str:
        return args.text

    async with make_runtime(scripted_llm(steps)) as runtime:
        runtime.ctx.get(TOOLS).register(define_tool("echo", "Echo.", EchoArgs, echo))
        handle = await runtime.ctx.get(AGENTS).create("s1")
        handle.agent.followup("say ping")
        await handle.agent.when_idle()
        types = [e.type for e in handle.agent.session.events]
        results = [e for e in handle.agent.session.events if e.type == ev.TOOL_RESULT]
        assert ev.payload(results[0], ev.TOOL_RESULT)["content"] == "ping"
        assert types[-1] == ev.TURN_END
        provider = runtime.ctx.get(LLM).get()
        assert isinstance(provider, ScriptedProvider)
        assert provider.remaining == 0
        assert len(provider.requests) == 2

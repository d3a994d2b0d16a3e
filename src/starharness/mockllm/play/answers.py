"""Answers that succeed: text, reasoning, tool calls, and the token-limit cut."""

from __future__ import annotations

from dataclasses import dataclass

from ...responder.steps import MaxTokens, ReasoningSuccess, SlowSuccess, Success, ToolCalls
from ..fragments import split_at, split_every
from ..shapes import DONE_EVENT, ChunkEncoder, completion_body
from ..usage import estimate_tokens, usage_body
from .exchange import Exchange, write_streamed

AnswerStep = Success | SlowSuccess | MaxTokens | ReasoningSuccess | ToolCalls


@dataclass(frozen=True, slots=True)
class Answer:
    """The content of a successful answer, independent of how it is delivered."""

    reasoning: str | None
    text: str | None
    calls: list[tuple[str, str, str]]
    finish_reason: str


def answer_of(step: AnswerStep, call_id_prefix: str) -> Answer:
    """What `step` says, with tool-call ids filled in."""
    if isinstance(step, ToolCalls):
        calls = [
            (call.id or f"{call_id_prefix}_{index}", call.name, call.arguments)
            for index, call in enumerate(step.calls)
        ]
        return Answer(step.reasoning, step.text, calls, "tool_calls")
    if isinstance(step, ReasoningSuccess):
        return Answer(step.reasoning, step.text, [], "stop")
    finish = "length" if isinstance(step, MaxTokens) else "stop"
    return Answer(None, step.text, [], finish)


def content_events(encoder: ChunkEncoder, answer: Answer, step: AnswerStep) -> list[str]:
    """The role event and every delta event of `answer`, without the finish event."""
    size = step.chunk_size
    events = [encoder.role()]
    if answer.reasoning:
        events.extend(encoder.reasoning(piece) for piece in split_every(answer.reasoning, size))
    if answer.text:
        events.extend(encoder.content(piece) for piece in split_every(answer.text, size))
    for index, (call_id, name, arguments) in enumerate(answer.calls):
        events.append(encoder.tool_call_start(index, call_id, name))
        events.extend(
            encoder.tool_call_arguments(index, fragment)
            for fragment in _argument_fragments(step, arguments)
        )
    return events


def _argument_fragments(step: AnswerStep, arguments: str) -> list[str]:
    if not isinstance(step, ToolCalls):
        return [arguments]
    if step.fragment_splits is not None:
        return split_at(arguments, step.fragment_splits)
    return split_every(arguments, step.fragment_size)


def answer_usage(exchange: Exchange, answer: Answer) -> dict[str, object]:
    """Usage for `answer`: completion tokens estimated from everything generated."""
    per_token = exchange.chars_per_token
    reasoning_chars = len(answer.reasoning or "")
    generated = reasoning_chars + len(answer.text or "")
    generated += sum(len(name) + len(arguments) for _, name, arguments in answer.calls)
    return usage_body(
        exchange.prompt_tokens,
        exchange.cached_tokens,
        estimate_tokens(generated, per_token),
        estimate_tokens(reasoning_chars, per_token),
    )


async def play_answer(exchange: Exchange, step: AnswerStep) -> None:
    """Deliver a successful answer, streamed or as one completion object."""
    answer = answer_of(step, f"call_{exchange.completion_id.rsplit('-', 1)[-1]}")
    await exchange.sleep(step.initial_delay_ms)
    usage = answer_usage(exchange, answer)
    out = exchange.out
    if not exchange.stream:
        body = completion_body(
            completion_id=exchange.completion_id,
            created=exchange.created,
            model=exchange.model,
            text=answer.text if answer.text or not answer.calls else None,
            reasoning=answer.reasoning,
            tool_calls=answer.calls,
            finish_reason=answer.finish_reason,
            usage=usage,
        )
        await out.send(200, body, "application/json")
        return
    encoder = exchange.encoder()
    events = content_events(encoder, answer, step)
    events.append(encoder.finish(answer.finish_reason, usage))
    if step.send_done:
        events.append(DONE_EVENT)
    out.start_stream()
    await write_streamed(exchange, step, events)
    out.end_stream()
    await out.drain()

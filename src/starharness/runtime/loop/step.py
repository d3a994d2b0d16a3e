"""What one step makes and logs: the assistant message folded from the stream, and the data of
the events that record the request, its chunks, its tool calls and their results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from ..llm.types import (
    AssistantMessage,
    Finish,
    FinishReason,
    LlmRequest,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from ..session import event_types as ev
from ..session import freeze_data

_TOOL_DATA_LIMIT = 1024
_tool_data: dict[ToolSchema, ev.ToolHeader] = {}
"""Each shared schema's frozen header entry, so a new session does not copy every schema."""


@dataclass(slots=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list[str])


@dataclass(slots=True)
class StepResult:
    message: AssistantMessage
    usage: Usage | None
    finish: FinishReason


def chunk_data(chunk: StreamChunk) -> ev.ChunkData:
    """The JSON form of a chunk as it is logged."""
    if isinstance(chunk, TextDelta):
        return {"type": chunk.type, "text": chunk.text}
    if isinstance(chunk, ToolCallDelta):
        return {
            "type": chunk.type,
            "index": chunk.index,
            "id": chunk.id,
            "name": chunk.name,
            "arguments_delta": chunk.arguments_delta,
        }
    if isinstance(chunk, ReasoningDelta):
        return {"type": chunk.type, "text": chunk.text}
    if isinstance(chunk, Usage):
        return {**usage_data(chunk), "type": chunk.type}
    return {"type": chunk.type, "reason": chunk.reason}


def usage_data(usage: Usage) -> ev.UsageData:
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "reasoning": usage.reasoning,
    }


class StepAccumulator:
    """Folds a chunk stream into an assistant message; tolerant of providers' ordering quirks."""

    __slots__ = ("_calls", "_reasoning", "_text", "finish", "usage")

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self.usage: Usage | None = None
        self.finish: FinishReason | None = None

    def add(self, chunk: StreamChunk) -> None:
        if isinstance(chunk, TextDelta):
            self._text.append(chunk.text)
        elif isinstance(chunk, ToolCallDelta):
            pending = self._calls.get(chunk.index)
            if pending is None:
                pending = self._calls[chunk.index] = _PendingCall()
            if chunk.id:
                pending.id = chunk.id
            if chunk.name:
                pending.name = chunk.name
            if chunk.arguments_delta:
                pending.parts.append(chunk.arguments_delta)
        elif isinstance(chunk, ReasoningDelta):
            self._reasoning.append(chunk.text)
        elif isinstance(chunk, Usage):
            self.usage = chunk
        elif isinstance(chunk, Finish):  # pyright: ignore[reportUnnecessaryIsInstance]
            self.finish = chunk.reason

    def text(self) -> str:
        return "".join(self._text)

    def message(self, *, drop_calls: bool = False) -> AssistantMessage:
        calls: list[ToolCall] = []
        for index in sorted(self._calls) if not drop_calls else ():
            pending = self._calls[index]
            call_id = pending.id or f"call_{index}"
            calls.append(ToolCall(call_id, pending.name, "".join(pending.parts)))
        reasoning = "".join(self._reasoning) if self._reasoning else None
        return AssistantMessage(text=self.text(), reasoning=reasoning, tool_calls=tuple(calls))

    def result(self) -> StepResult:
        message = self.message()
        finish: FinishReason = self.finish or ("tool-calls" if message.tool_calls else "stop")
        return StepResult(message, self.usage, finish)


def message_data(turn: int, step: int, result: StepResult) -> ev.AssistantMessageData:
    msg = result.message
    data: ev.AssistantMessageData = {
        "turn": turn,
        "step": step,
        "text": msg.text,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in msg.tool_calls
        ],
        "finish": result.finish,
    }
    if msg.reasoning is not None:
        data["reasoning"] = msg.reasoning
    if result.usage is not None:
        data["usage"] = usage_data(result.usage)
    return data


def request_context_data(provider: str, request: LlmRequest) -> ev.RequestContextData:
    choice = request.tool_choice
    return {
        "provider": provider,
        "model": request.model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "tool_choice": (
            choice
            if isinstance(choice, str)
            else {"name": choice.name, "begun": choice.begun}
            if choice.begun
            else {"name": choice.name}
        ),
    }


def tool_header(schema: ToolSchema) -> ev.ToolHeader:
    """A tool's entry in the request/header event, frozen once per shared schema."""
    data = _tool_data.get(schema)
    if data is None:
        if len(_tool_data) >= _TOOL_DATA_LIMIT:
            _tool_data.clear()
        header = ev.ToolHeader(
            name=schema.name, description=schema.description, parameters=schema.parameters
        )
        # Frozen once here, so each header event shares it instead of copying the schema.
        data = _tool_data[schema] = cast(ev.ToolHeader, freeze_data(header))
    return data


def tool_result_data(
    turn: int, step: int, call: ToolCall, content: str, is_error: bool, code: str | None
) -> ev.ToolResultData:
    data = ev.ToolResultData(
        turn=turn, step=step, call_id=call.id, name=call.name, content=content, is_error=is_error
    )
    if code is not None:
        data["error"] = ev.ToolErrorData(code=code)
    return data


__all__ = [
    "StepAccumulator",
    "StepResult",
    "chunk_data",
    "message_data",
    "request_context_data",
    "tool_header",
    "tool_result_data",
    "usage_data",
]

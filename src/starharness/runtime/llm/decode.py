"""Turns chat-completions stream events into normalised chunks.

Text, reasoning and tool-call fragments pass through as they arrive. Usage and the finish reason
are held back so every successful stream ends the same way: one Usage (if reported), then Finish.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from .errors import ProtocolError
from .http_errors import error_from_payload
from .profiles import ProviderProfile
from .types import (
    Finish,
    FinishReason,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    Usage,
)

_FINISH_REASONS: Mapping[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "length": "max-tokens",
    "content_filter": "content-filter",
    # DeepSeek cuts the answer short when it runs out of capacity.
    "insufficient_system_resource": "error",
}

DONE = b"[DONE]"
_raw_decode = json.JSONDecoder().raw_decode


def _int_at(usage: Mapping[str, Any], paths: tuple[tuple[str, ...], ...]) -> int:
    for path in paths:
        node: Any = usage
        for step in path:
            node = cast(Mapping[str, Any], node).get(step) if isinstance(node, Mapping) else None
        if isinstance(node, int):
            return node
    return 0


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _snippet(data: bytes) -> str:
    text = data[:120].decode("utf-8", "replace")
    return text + ("..." if len(data) > 120 else "")


class ChunkDecoder:
    """Decodes the events of one response; keeps the little state a stream needs."""

    __slots__ = (
        "_cache_read_paths",
        "_cache_write_paths",
        "_finish",
        "_next_tool_index",
        "_reasoning_fields",
        "_reasoning_tokens_paths",
        "_tool_indexes",
        "_usage",
        "events",
        "saw_tool_call",
    )

    def __init__(self, profile: ProviderProfile) -> None:
        self._reasoning_fields = profile.reasoning_fields
        self._cache_read_paths = profile.cache_read_paths
        self._cache_write_paths = profile.cache_write_paths
        self._reasoning_tokens_paths = profile.reasoning_tokens_paths
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._tool_indexes: dict[str, int] = {}
        self._next_tool_index = 0
        self.events = 0
        self.saw_tool_call = False

    @property
    def finished(self) -> bool:
        """A finish reason has arrived (the answer is complete even if [DONE] never comes)."""
        return self._finish is not None

    def decode(self, data: bytes) -> list[StreamChunk]:
        """The chunks carried by one event's data; raises an LlmError for an error event."""
        try:
            text = data.decode()
            # raw_decode skips json.loads' type and encoding checks. It stops at the end of
            # the value and refuses leading whitespace; the full parse settles those cases.
            try:
                event, end = _raw_decode(text)
            except ValueError:
                event, end = json.loads(text), len(text)
            if end != len(text):
                event = json.loads(text)
        except ValueError:
            raise ProtocolError(f"malformed JSON in a stream event: {_snippet(data)}") from None
        if not isinstance(event, dict):
            raise ProtocolError(f"a stream event is not a JSON object: {_snippet(data)}")
        self.events += 1
        try:
            return self._chunks(event)  # pyright: ignore[reportUnknownArgumentType]
        except (AttributeError, KeyError, TypeError, IndexError):
            raise ProtocolError(f"unexpected stream event shape: {_snippet(data)}") from None

    def decode_completion(self, data: bytes) -> list[StreamChunk]:
        """Every chunk of an unstreamed answer, ending like a stream (Usage, then Finish)."""
        try:
            payload = json.loads(data)
        except ValueError:
            raise ProtocolError(f"malformed JSON in an answer: {_snippet(data)}") from None
        if not isinstance(payload, dict):
            raise ProtocolError(f"an answer is not a JSON object: {_snippet(data)}")
        answer = cast(dict[str, Any], payload)
        try:
            event = _as_stream_event(answer)
        except (AttributeError, KeyError, TypeError, IndexError):
            raise ProtocolError(f"unexpected answer shape: {_snippet(data)}") from None
        if event is None:
            if answer.get("error"):
                raise error_from_payload(answer, status=None)
            raise ProtocolError(f"an answer without choices: {_snippet(data)}")
        self.events += 1
        try:
            chunks = self._chunks(event)
        except (AttributeError, KeyError, TypeError, IndexError):
            raise ProtocolError(f"unexpected answer shape: {_snippet(data)}") from None
        return chunks + self.finish()

    def _chunks(self, event: dict[str, Any]) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        choices = event.get("choices")
        if choices:
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                for field in self._reasoning_fields:
                    reasoning = delta.get(field)
                    if reasoning:
                        out.append(ReasoningDelta(reasoning))
                        break
                content = delta.get("content")
                if content:
                    out.append(TextDelta(content))
                calls = delta.get("tool_calls")
                if calls:
                    for call in calls:
                        out.append(self._tool_call(call))
            reason = choice.get("finish_reason")
            if reason:
                self._finish = reason
        elif event.get("error"):
            raise error_from_payload(event, status=None)
        usage = event.get("usage")
        if usage:
            self._usage = self._read_usage(usage)
        return out

    def _tool_call(self, call: dict[str, Any]) -> ToolCallDelta:
        self.saw_tool_call = True
        call_id: str | None = call.get("id") or None
        index = call.get("index")
        if not isinstance(index, int):
            # Some servers leave out the index; tell calls apart by id, else continue the last one.
            if call_id is not None and call_id not in self._tool_indexes:
                index = self._next_tool_index
            else:
                index = self._tool_indexes.get(call_id or "", max(self._next_tool_index - 1, 0))
        if call_id is not None:
            self._tool_indexes[call_id] = index
        if index >= self._next_tool_index:
            self._next_tool_index = index + 1
        function = call.get("function")
        if function:
            name: str | None = function.get("name") or None
            arguments = function.get("arguments") or ""
        else:
            name, arguments = None, ""
        return ToolCallDelta(index, call_id, name, arguments)

    def _read_usage(self, usage: dict[str, Any]) -> Usage:
        return Usage(
            input=_int(usage.get("prompt_tokens")),
            output=_int(usage.get("completion_tokens")),
            cache_read=_int_at(usage, self._cache_read_paths),
            cache_write=_int_at(usage, self._cache_write_paths),
            reasoning=_int_at(usage, self._reasoning_tokens_paths),
        )

    def finish(self) -> list[StreamChunk]:
        """The closing chunks: Usage (when reported) then Finish; call at the end of the stream."""
        reason = self._finish
        if reason is None:
            if self.events == 0:
                raise ProtocolError("the stream ended without any event")
            reason = "tool_calls" if self.saw_tool_call else "stop"
        out: list[StreamChunk] = []
        if self._usage is not None:
            out.append(self._usage)
        out.append(Finish(_FINISH_REASONS.get(reason, "stop")))
        return out


def _as_stream_event(answer: dict[str, Any]) -> dict[str, Any] | None:
    """An unstreamed answer as the one stream event that would carry all of it."""
    choices = answer.get("choices")
    if not choices:
        return None
    choice = choices[0]
    message: dict[str, Any] = dict(choice.get("message") or {})
    calls = message.get("tool_calls")
    if calls:
        message["tool_calls"] = [dict(call, index=i) for i, call in enumerate(calls)]
    event: dict[str, Any] = {
        "choices": [{"delta": message, "finish_reason": choice.get("finish_reason")}]
    }
    if answer.get("usage"):
        event["usage"] = answer["usage"]
    return event

"""OpenAI-compatible wire shapes: SSE chunk events, completions, error bodies, model lists."""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring
from typing import Any

DONE_EVENT = "data: [DONE]\n\n"
_OPEN_TAIL = ',"logprobs":null,"finish_reason":null}]}\n\n'
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def to_wire_bytes(text: str) -> bytes:
    """UTF-8 bytes of encoded JSON text; lone surrogates become `\\uXXXX` escapes."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate can only come from a JSON string literal here, where the escape
        # decodes back to the same code point.
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ChunkEncoder:
    """Encodes the `data:` events of one streamed completion, sharing the constant parts."""

    __slots__ = ("_head",)

    def __init__(self, completion_id: str, created: int, model: str) -> None:
        self._head = (
            f'data: {{"id":{encode_basestring(completion_id)},"object":"chat.completion.chunk",'
            f'"created":{created},"model":{encode_basestring(model)},'
            '"system_fingerprint":"fp_mock","choices":[{"index":0,"delta":'
        )

    def role(self) -> str:
        return self._head + '{"role":"assistant","content":""}' + _OPEN_TAIL

    def content(self, piece: str) -> str:
        return self._head + '{"content":' + encode_basestring(piece) + "}" + _OPEN_TAIL

    def reasoning(self, piece: str) -> str:
        return self._head + '{"reasoning_content":' + encode_basestring(piece) + "}" + _OPEN_TAIL

    def tool_call_start(self, index: int, call_id: str, name: str) -> str:
        return (
            f'{self._head}{{"tool_calls":[{{"index":{index},"id":{encode_basestring(call_id)},'
            f'"type":"function","function":{{"name":{encode_basestring(name)},"arguments":""}}}}]}}'
            + _OPEN_TAIL
        )

    def tool_call_arguments(self, index: int, fragment: str) -> str:
        return (
            f'{self._head}{{"tool_calls":[{{"index":{index},'
            f'"function":{{"arguments":{encode_basestring(fragment)}}}}}]}}' + _OPEN_TAIL
        )

    def finish(self, reason: str, usage: dict[str, Any] | None) -> str:
        tail = f',"logprobs":null,"finish_reason":{encode_basestring(reason)}}}]'
        if usage is not None:
            tail += ',"usage":' + _dumps(usage)
        return self._head + "{}" + tail + "}\n\n"

    def wrong_shape(self) -> str:
        """A well-formed JSON event whose `choices` is not a list."""
        return self._head.split('"choices"', 1)[0] + '"choices":"not-a-list"}\n\n'


def completion_body(
    *,
    completion_id: str,
    created: int,
    model: str,
    text: str | None,
    reasoning: str | None,
    tool_calls: list[tuple[str, str, str]],
    finish_reason: str,
    usage: dict[str, Any],
) -> bytes:
    """A non-streamed `chat.completion` object; tool calls are (id, name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in tool_calls
        ]
    body = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_mock",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage,
    }
    return to_wire_bytes(_dumps(body))


def error_body(message: str, error_type: str, code: str | None, param: str | None = None) -> bytes:
    """The OpenAI error shape: `{"error": {message, type, param, code}}`."""
    body = {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    return to_wire_bytes(_dumps(body))


def models_body(models: tuple[str, ...]) -> bytes:
    """The `GET /v1/models` list."""
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "mock"} for name in models]
    return _dumps({"object": "list", "data": data}).encode("utf-8")

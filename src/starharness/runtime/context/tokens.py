"""A cheap estimate of a request's prompt tokens, from characters (no tokenizer needed)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..llm.types import AssistantMessage, Message, ToolMessage, UserMessage

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
"""Role and separators a chat template adds around each message."""

_tools_chars: dict[int, tuple[Any, int]] = {}


def message_chars(message: Message) -> int:
    if isinstance(message, UserMessage):
        return len(message.content)
    if isinstance(message, ToolMessage):
        return len(message.content)
    assert isinstance(message, AssistantMessage)
    size = len(message.text) + len(message.reasoning or "")
    for call in message.tool_calls:
        size += len(call.name) + len(call.arguments) + len(call.id)
    return size


def header_chars(header: Mapping[str, Any] | None) -> int:
    """Characters of a logged request/header (system prompt and tool schemas)."""
    if header is None:
        return 0
    key = id(header)
    known = _tools_chars.get(key)
    if known is not None and known[0] is header:
        return known[1]
    size = len(header.get("system", "")) + len(json.dumps(header.get("tools", ())))
    if len(_tools_chars) > 256:
        _tools_chars.clear()
    _tools_chars[key] = (header, size)
    return size


def estimate_tokens(header: Mapping[str, Any] | None, messages: Sequence[Message]) -> int:
    chars = header_chars(header)
    for message in messages:
        chars += message_chars(message)
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS * len(messages)


def messages_tokens(messages: Sequence[Message]) -> int:
    return estimate_tokens(None, messages)

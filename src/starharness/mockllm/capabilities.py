"""What kind of server the mock plays: which requests it refuses and what its model sees.

A harness chooses how to drive a model from what a server declares it can do; the mock can
play each such server, so that choice and every plan it leads to run against real HTTP
without a model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from ..responder import ChatMessage


@dataclass(frozen=True, slots=True)
class MockCapabilities:
    """One kind of server, as the mock plays it."""

    name: str
    streams_open_tool_choice: bool = True
    """False: a streamed request with tools and an open tool choice ("auto", "required" or
    none given) fails with HTTP 500, as llama-cpp-python's `chatml-function-calling` does."""
    shows_tool_results: bool = True
    """False: tool messages are dropped before the responder sees the conversation, as a chat
    template without a tool role drops them."""
    strict_schema: bool = False
    """True: a function marked `strict: true` must have a strict schema (every object lists
    all its properties as required and forbids others), else HTTP 400, as OpenAI answers."""
    continues_calls: bool = False
    """True: a request whose last message is an assistant message holding only a call of the
    forced tool, its arguments cut inside the first string, is answered with that call
    continued: the responder sees the conversation without it, and the first string of its
    call begins with the given text (`models serve-local` does so)."""
    context_tokens: int | None = None
    """The model's window: a request whose prompt (counted as the mock counts usage) plus its
    `max_tokens` exceeds it is refused with HTTP 400 and the message llama-cpp-python's server
    sends (`context_length_exceeded`). None: no limit."""

    def refusal(self, body: Mapping[str, Any]) -> tuple[int, str] | None:
        """The status and message this server answers `body` with instead, if it refuses it."""
        tools = cast(Sequence[Any], body.get("tools") or ())
        choice = body.get("tool_choice", "auto")
        if (
            not self.streams_open_tool_choice
            and body.get("stream") is True
            and tools
            and choice in ("auto", "required", None)
        ):
            return 500, (
                f"{self.name} (mock): a streamed request with tools cannot use tool_choice "
                f"{choice!r}; name a function to call"
            )
        if self.strict_schema:
            for tool in tools:
                function = _mapping(_mapping(tool).get("function"))
                if function.get("strict") is True and not _strict(
                    _mapping(function.get("parameters"))
                ):
                    return 400, (
                        f"{self.name} (mock): function {function.get('name')!r} is marked "
                        "strict, but its schema is not (every object must require all its "
                        "properties and set additionalProperties to false)"
                    )
        return None

    def overflow(self, body: Mapping[str, Any], prompt_tokens: int) -> tuple[int, str] | None:
        """The refusal of a request too long for the window, if it is."""
        window = self.context_tokens
        if window is None:
            return None
        limit = body.get("max_tokens")
        completion = limit if isinstance(limit, int) else 0
        if prompt_tokens + completion <= window:
            return None
        return 400, (
            f"This model's maximum context length is {window} tokens. However, you requested"
            f" {prompt_tokens + completion} tokens ({prompt_tokens} in the messages,"
            f" {completion} in the completion). Please reduce the length of the messages or"
            " completion."
        )

    def begun_call(
        self, messages: tuple[ChatMessage, ...], tool_choice: object
    ) -> tuple[tuple[ChatMessage, ...], str | None]:
        """`messages` without a last message that begins the forced call, and that call's
        arguments so far; `messages` whole and None where this server continues no call."""
        forced = _mapping(_mapping(tool_choice).get("function")).get("name")
        if not self.continues_calls or not messages or not isinstance(forced, str):
            return messages, None
        last = messages[-1]
        calls = last.tool_calls or ()
        if last.role != "assistant" or last.text or len(calls) != 1:
            return messages, None
        if calls[0].function.name != forced:
            return messages, None
        return messages[:-1], calls[0].function.arguments

    def visible(self, messages: tuple[ChatMessage, ...]) -> tuple[ChatMessage, ...]:
        """The conversation as this server's model sees it."""
        if self.shows_tool_results:
            return messages
        return tuple(message for message in messages if message.role != "tool")


def continued(begun: str, arguments: str) -> str:
    """`arguments` (a JSON object) as the continuation of the call `begun`: its first string
    begins with the begun text, then a space and the string's own words. `arguments` itself
    when either cannot be read so."""
    try:
        key, given = next(iter(json.loads(begun + '"}').items()))
        whole = json.loads(arguments)
    except (ValueError, StopIteration):
        return arguments
    if not isinstance(given, str) or not isinstance(whole, dict):
        return arguments
    fields = cast(dict[str, Any], whole)
    own = fields.get(key)
    line = given if not isinstance(own, str) or not own else f"{given} {own}"
    text = json.dumps(
        {key: line, **{k: v for k, v in fields.items() if k != key}},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return text if text.startswith(begun) else arguments


def _mapping(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _strict(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "object" or "properties" in schema:
        properties = cast(Mapping[str, Any], schema.get("properties") or {})
        required = set(cast(Sequence[str], schema.get("required") or ()))
        if schema.get("additionalProperties") is not False or required != set(properties):
            return False
        if not all(_strict(cast(Mapping[str, Any], p)) for p in properties.values()):
            return False
    parts = [
        *cast(Sequence[Any], schema.get("anyOf") or ()),
        *cast(Mapping[str, Any], schema.get("$defs") or {}).values(),
    ]
    items = schema.get("items")
    if isinstance(items, Mapping):
        parts.append(items)
    return all(_strict(cast(Mapping[str, Any], part)) for part in parts)


FULL = MockCapabilities("full")
"""A server that streams an open tool choice and shows tool results (DeepSeek, vLLM)."""
LLAMA_CPP = MockCapabilities(
    "llama-cpp", streams_open_tool_choice=False, shows_tool_results=False, continues_calls=True
)
"""llama-cpp-python's server as `models serve-local` runs it: tool results hidden, no open
tool choice streamed, a begun call continued."""
NO_OPEN_STREAM = MockCapabilities("no-open-stream", streams_open_tool_choice=False)
NO_TOOL_RESULTS = MockCapabilities("no-tool-results", shows_tool_results=False)
STRICT = MockCapabilities("strict", strict_schema=True)
"""A server that enforces `strict: true` function schemas (OpenAI)."""

CAPABILITY_PROFILES: Mapping[str, MockCapabilities] = MappingProxyType(
    {c.name: c for c in (FULL, LLAMA_CPP, NO_OPEN_STREAM, NO_TOOL_RESULTS, STRICT)}
)
"""The kinds of server the mock can play, by name (`star-harness mock-llm --plays NAME`)."""

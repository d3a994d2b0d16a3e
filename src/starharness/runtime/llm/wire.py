"""Messages, tools and requests in chat-completions JSON, with encodings of shared objects cached.

Each message and tool schema is encoded once; a request body is those cached bytes joined, so
the work per request grows with what is new, not with the length of the history.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from .profiles import DEEPSEEK, ProviderProfile
from .quirks import strict_compatible
from .types import (
    LlmRequest,
    Message,
    NamedToolChoice,
    ToolChoice,
    ToolMessage,
    ToolSchema,
    UserMessage,
)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_COMPACT = (",", ":")
# Built once: `json.dumps` with any option set builds a new encoder for every call.
_UTF8 = json.JSONEncoder(ensure_ascii=False, separators=_COMPACT)
_ASCII = json.JSONEncoder(separators=_COMPACT)


def _encode(value: Any) -> bytes:
    try:
        return _UTF8.encode(value).encode()
    except UnicodeEncodeError:
        # Lone surrogates cannot be UTF-8; \u escapes carry them (and stay valid JSON).
        return _ASCII.encode(value).encode()


def dumps_wire(value: Any) -> str:
    """`value` as JSON in exactly the style request bodies use (compact, non-ASCII kept)."""
    return _encode(value).decode()


class _TwoGenerationCache(Generic[K, V]):
    """A bounded cache: recently used entries survive one generation flip, the rest are dropped."""

    __slots__ = ("_cold", "_hot", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._hot: dict[K, V] = {}
        self._cold: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        value = self._hot.get(key)
        if value is None:
            value = self._cold.pop(key, None)
            if value is not None:
                self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        hot = self._hot
        hot[key] = value
        if len(hot) > self._size:
            self._cold = hot
            self._hot = {}


class _PerMessage:
    """The encoded bytes of each live message, forgotten when the message is.

    A bounded cache thrashes once the histories in flight hold more messages than it does (a
    hundred long conversations), and then every request encodes its whole history again.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Message], bytes]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, message: Message) -> bytes | None:
        entry = self._entries.get(id(message))
        if entry is not None and entry[0]() is message:
            return entry[1]
        return None

    def put(self, message: Message, encoded: bytes) -> None:
        key = id(message)
        entries = self._entries

        def forget(ref: weakref.ref[Message]) -> None:
            # The id may already belong to a newer message; drop only our own entry.
            current = entries.get(key)
            if current is not None and current[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(message, forget), encoded)


def _plain(value: Any) -> Any:
    """A JSON-ready copy: mappings become dicts and non-string sequences lists."""
    if isinstance(value, Mapping):
        mapping = cast(Mapping[Any, Any], value)
        return {str(k): _plain(v) for k, v in mapping.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in cast(Sequence[Any], value)]
    return value


def _tool_choice(choice: ToolChoice, profile: ProviderProfile) -> Any:
    if isinstance(choice, NamedToolChoice):
        if not profile.supports_named_tool_choice:
            return "required"
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def _message_dict(
    message: Message, reasoning_field: str | None, *, null_content: bool = True
) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
    wire: dict[str, Any] = {
        "role": "assistant",
        # With tool calls and no text, OpenAI's schema wants null rather than "".
        "content": message.text
        if message.text or not message.tool_calls or not null_content
        else None,
    }
    if reasoning_field is not None and message.reasoning is not None:
        wire[reasoning_field] = message.reasoning
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                # Servers that parse arguments refuse "", which some models send for no-arg tools.
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in message.tool_calls
        ]
    return wire


def _tool_dict(schema: ToolSchema, profile: ProviderProfile = DEEPSEEK) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": schema.name,
        "description": schema.description,
        "parameters": _plain(schema.parameters),
    }
    if profile.argument_constraint == "strict-schema" and strict_compatible(schema.parameters):
        # The server then generates only arguments that match the schema.
        function["strict"] = True
    return {"type": "function", "function": function}


# Keys the body builder writes itself; `request.extra` may replace (or, with None, drop) them.
_KEY_PREFIX: dict[str, bytes] = {}


def _key(name: str) -> bytes:
    prefix = _KEY_PREFIX.get(name)
    if prefix is None:
        prefix = _encode(name) + b":"
        if len(_KEY_PREFIX) < 256:
            _KEY_PREFIX[name] = prefix
    return prefix


class WireEncoder:
    """Encodes for one provider profile; shared by every provider using that profile."""

    __slots__ = (
        "_messages",
        "_null_content",
        "_profile",
        "_reasoning_field",
        "_system",
        "_tool_lists",
        "_tools",
    )

    def __init__(self, profile: ProviderProfile) -> None:
        self._profile = profile
        self._reasoning_field = profile.reasoning_send_field
        self._null_content = profile.null_content_with_tool_calls
        self._messages = _PerMessage()
        self._system: _TwoGenerationCache[str, bytes] = _TwoGenerationCache(64)
        self._tools: _TwoGenerationCache[ToolSchema, tuple[dict[str, Any], bytes]] = (
            _TwoGenerationCache(1024)
        )
        self._tool_lists: _TwoGenerationCache[tuple[ToolSchema, ...], bytes] = _TwoGenerationCache(
            256
        )

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    # -- messages ------------------------------------------------------------------------------

    def message_dicts(self, system: str, messages: Iterable[Message]) -> list[dict[str, Any]]:
        """The `messages` array as sent: the system prompt first (if any), then the history."""
        wire = [{"role": "system", "content": system}] if system else []
        wire.extend(
            _message_dict(m, self._reasoning_field, null_content=self._null_content)
            for m in messages
        )
        return wire

    def _message_bytes(self, message: Message) -> bytes:
        encoded = self._messages.get(message)
        if encoded is None:
            encoded = _encode(
                _message_dict(message, self._reasoning_field, null_content=self._null_content)
            )
            self._messages.put(message, encoded)
        return encoded

    def messages_json(self, system: str, messages: Iterable[Message]) -> bytes:
        """The exact bytes of the `messages` array in a request body."""
        parts: list[bytes] = []
        if system:
            encoded = self._system.get(system)
            if encoded is None:
                encoded = _encode({"role": "system", "content": system})
                self._system.put(system, encoded)
            parts.append(encoded)
        message_bytes = self._message_bytes
        parts.extend(message_bytes(m) for m in messages)
        return b"[" + b",".join(parts) + b"]"

    # -- tools ---------------------------------------------------------------------------------

    def _tool_entry(self, schema: ToolSchema) -> tuple[dict[str, Any], bytes]:
        entry = self._tools.get(schema)
        if entry is None:
            wire = _tool_dict(schema, self._profile)
            entry = (wire, _encode(wire))
            self._tools.put(schema, entry)
        return entry

    def tool_dicts(self, tools: Iterable[ToolSchema]) -> list[dict[str, Any]]:
        """The `tools` array; the dicts are cached and shared, so treat them as read-only."""
        return [self._tool_entry(schema)[0] for schema in tools]

    def tools_json(self, tools: Sequence[ToolSchema]) -> bytes:
        key = tools if isinstance(tools, tuple) else tuple(tools)
        encoded = self._tool_lists.get(key)
        if encoded is None:
            encoded = b"[" + b",".join(self._tool_entry(s)[1] for s in key) + b"]"
            self._tool_lists.put(key, encoded)
        return encoded

    # -- the request body ----------------------------------------------------------------------

    def body(
        self,
        request: LlmRequest,
        *,
        model: str | None = None,
        cache_key: str | None = None,
        stream: bool = True,
    ) -> bytes:
        """The complete JSON body of a chat-completions request (streaming unless `stream=False`).

        `model` replaces an empty `request.model`; `cache_key` is sent if the profile takes one.
        """
        profile = self._profile
        messages = self.messages_json(request.system, request.messages)
        choice = request.tool_choice
        if isinstance(choice, NamedToolChoice) and choice.begun and profile.continues_calls:
            messages = _with_begun_call(messages, choice, profile)
        fields: list[tuple[str, bytes]] = [
            ("model", _encode(request.model or model or "")),
            ("messages", messages),
        ]
        if request.tools:
            fields.append(("tools", self.tools_json(request.tools)))
            if profile.supports_tool_choice:
                fields.append(("tool_choice", _encode(_tool_choice(request.tool_choice, profile))))
        fields.append(("stream", b"true" if stream else b"false"))
        if stream and profile.stream_usage:
            fields.append(("stream_options", b'{"include_usage":true}'))
        if request.max_tokens is not None:
            fields.append((profile.max_tokens_field, str(int(request.max_tokens)).encode()))
        if request.temperature is not None:
            fields.append(("temperature", _encode(float(request.temperature))))
        if cache_key is not None and profile.cache_key_field is not None:
            fields.append((profile.cache_key_field, _encode(cache_key)))
        if request.extra:
            fields = _merge_extra(fields, request.extra)
        return b"{" + b",".join(_key(name) + value for name, value in fields) + b"}"


def _with_begun_call(messages: bytes, choice: NamedToolChoice, profile: ProviderProfile) -> bytes:
    """The messages array with the forced call begun in a last assistant message, which a
    server that continues calls answers by continuing it (never logged as a message: the
    answer, which begins with it, is)."""
    call = {"name": choice.name, "arguments": choice.begun}
    begun = {
        "role": "assistant",
        "content": None if profile.null_content_with_tool_calls else "",
        "tool_calls": [{"id": "begun", "type": "function", "function": call}],
    }
    separator = b"," if messages != b"[]" else b""
    return messages[:-1] + separator + _encode(begun) + b"]"


def _merge_extra(
    fields: list[tuple[str, bytes]], extra: Mapping[str, Any]
) -> list[tuple[str, bytes]]:
    position = {name: i for i, (name, _) in enumerate(fields)}
    merged: list[tuple[str, bytes] | None] = list(fields)
    for name, value in extra.items():
        index = position.get(name)
        entry = None if value is None else (name, _encode(value))
        if index is None:
            if entry is not None:
                merged.append(entry)
        else:
            merged[index] = entry
    return [entry for entry in merged if entry is not None]


_ENCODERS: dict[ProviderProfile, WireEncoder] = {}


def encoder_for(profile: ProviderProfile) -> WireEncoder:
    """The shared encoder of `profile` (one per profile, so providers share its caches)."""
    encoder = _ENCODERS.get(profile)
    if encoder is None:
        encoder = _ENCODERS[profile] = WireEncoder(profile)
    return encoder


def to_wire_messages(
    system: str, messages: Iterable[Message], *, profile: ProviderProfile = DEEPSEEK
) -> list[dict[str, Any]]:
    """The `messages` array a provider with `profile` sends for this system text and history."""
    return encoder_for(profile).message_dicts(system, messages)


def to_wire_tools(
    tools: Iterable[ToolSchema], *, profile: ProviderProfile = DEEPSEEK
) -> list[dict[str, Any]]:
    """The `tools` array (cached per ToolSchema object; read-only)."""
    return encoder_for(profile).tool_dicts(tools)

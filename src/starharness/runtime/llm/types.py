"""Provider-neutral LLM vocabulary: messages, requests and normalised stream chunks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# -- messages (the model-visible history) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model made it; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, weakref_slot=True)
class UserMessage:
    """A user-role message; `source` says who wrote it (user, context, plugin, tool, ...)."""

    content: str
    source: str = "user"
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class AssistantMessage:
    """What the model said in one step: text, optional reasoning, and tool calls in order."""

    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ToolMessage:
    """The result of one tool call as the model will read it."""

    call_id: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolMessage


# -- tools as the model sees them ------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class ToolSchema:
    """A tool's name, description and JSON-Schema parameters; built once and shared."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    """Force the model to call this tool."""

    name: str
    begun: str = ""
    """The call's arguments begin with this text (JSON cut inside its first string), and the
    model writes the rest; sent only to a server whose profile continues calls
    (`ProviderProfile.continues_calls`), others ignore it."""


ToolChoice = Literal["auto", "required", "none"] | NamedToolChoice


# -- the request -------------------------------------------------------------------------------


@dataclass(slots=True)
class LlmRequest:
    """One chat request. `messages` and `tools` are shared, never copied per request."""

    model: str
    system: str
    messages: Sequence[Message]
    session_id: str
    tools: Sequence[ToolSchema] = ()
    tool_choice: ToolChoice = "auto"
    max_tokens: int | None = None
    temperature: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Provider-specific body fields, merged last."""
    forcible_tool: str | None = None
    """A tool the caller allows the provider to force when the server cannot stream an open
    tool choice ("auto"/"required"); None: such a request is sent unstreamed instead."""


# -- stream chunks -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    type: Literal["text-delta"] = "text-delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str
    type: Literal["reasoning-delta"] = "reasoning-delta"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of tool call `index`; `id` and `name` come with its first fragment."""

    index: int
    id: str | None
    name: str | None
    arguments_delta: str
    type: Literal["tool-call-delta"] = "tool-call-delta"


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    type: Literal["usage"] = "usage"


FinishReason = Literal["stop", "tool-calls", "max-tokens", "content-filter", "aborted", "error"]


@dataclass(frozen=True, slots=True)
class Finish:
    reason: FinishReason
    type: Literal["finish"] = "finish"


StreamChunk = TextDelta | ReasoningDelta | ToolCallDelta | Usage | Finish

"""What the mock receives: the parsed chat request handed to responders, and request records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .steps import Step


class _Lenient(BaseModel):
    # Clients send provider extras we do not model; keep them rather than reject the request.
    model_config = ConfigDict(frozen=True, extra="allow")


class FunctionCall(_Lenient):
    """The function part of a tool call an assistant message made."""

    name: str
    arguments: str = ""


class MessageToolCall(_Lenient):
    """A tool call inside an assistant message of the history."""

    id: str
    type: str = "function"
    function: FunctionCall


class ChatMessage(_Lenient):
    """One message of the request history."""

    role: str
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_calls: tuple[MessageToolCall, ...] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None

    @property
    def text(self) -> str:
        """The message's text, joining the text parts of a multi-part content."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(part.get("text", "")) for part in self.content)


class FunctionDefinition(_Lenient):
    """A function the model may call."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class OfferedTool(_Lenient):
    """A tool offered in the request."""

    type: str = "function"
    function: FunctionDefinition


class _ChatBody(_Lenient):
    model: str = Field(min_length=1)
    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    tools: tuple[OfferedTool, ...] = ()
    tool_choice: Any = None
    stream: bool = False


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A chat-completions request as a responder sees it."""

    conversation: str
    turn: int
    model: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[OfferedTool, ...]
    tool_choice: Any
    stream: bool
    headers: Mapping[str, str]
    body: Mapping[str, Any]

    @property
    def last_message(self) -> ChatMessage:
        """The newest message of the history."""
        return self.messages[-1]

    def last_user_text(self) -> str | None:
        """Text of the newest user message, if any."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text
        return None

    def tool_names(self) -> list[str]:
        """Names of the offered tools, in request order."""
        return [tool.function.name for tool in self.tools]


class RequestError(ValueError):
    """The request cannot be served; the message names what is wrong."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True, slots=True)
class ParsedBody:
    """A chat body that passed validation, with the raw JSON kept for prefix-cache accounting."""

    raw: dict[str, Any]
    chat: _ChatBody


def decode_json_body(body: bytes) -> Any:
    """Decode a request body as JSON, or raise RequestError naming the problem."""
    try:
        # Decode first: json.loads(bytes) would guess UTF-16/32 from the first bytes.
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RequestError(f"request body is not valid UTF-8: {exc}") from None
    except json.JSONDecodeError as exc:
        raise RequestError(f"request body is not valid JSON: {exc}") from None


def parse_chat_body(decoded: Any) -> ParsedBody:
    """Validate a decoded chat-completions body."""
    if not isinstance(decoded, dict):
        raise RequestError(f"request body must be a JSON object, got {type(decoded).__name__}")
    # JSON object keys are always strings.
    raw = cast(dict[str, Any], decoded)
    try:
        chat = _ChatBody.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RequestError(f"invalid request body at {where}: {first['msg']}", where) from None
    return ParsedBody(raw=raw, chat=chat)


def make_chat_request(
    parsed: ParsedBody, *, conversation: str, turn: int, headers: Mapping[str, str]
) -> ChatRequest:
    """Build the responder's view of a validated body."""
    chat = parsed.chat
    return ChatRequest(
        conversation=conversation,
        turn=turn,
        model=chat.model,
        messages=chat.messages,
        tools=chat.tools,
        tool_choice=chat.tool_choice,
        stream=chat.stream,
        headers=headers,
        body=parsed.raw,
    )


@dataclass(slots=True)
class RecordedRequest:
    """One request as the mock received it, and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    conversation: str | None = None
    step: Step | None = None
    error: str | None = None

    @property
    def messages(self) -> list[Any]:
        """The `messages` of a chat body (empty when there is none)."""
        if isinstance(self.body, dict):
            messages = self.body.get("messages")  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
            if isinstance(messages, list):
                return list(messages)  # pyright: ignore[reportUnknownArgumentType]
        return []

"""What the mock receives: the chat body it validates into a responder's request, and records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..responder import ChatMessage, ChatRequest, OfferedTool, Step


class _ChatBody(BaseModel):
    # Clients send provider extras we do not model; keep them rather than reject the request.
    model_config = ConfigDict(frozen=True, extra="allow")

    model: str = Field(min_length=1)
    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    tools: tuple[OfferedTool, ...] = ()
    tool_choice: Any = None
    stream: bool = False


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

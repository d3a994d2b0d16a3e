"""What a responder is given: the chat-completions request the mock LLM parsed off the wire."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict

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


Responder: TypeAlias = Callable[[ChatRequest], "Step | Awaitable[Step]"]
"""Given the parsed request, return (or await) the step to play."""

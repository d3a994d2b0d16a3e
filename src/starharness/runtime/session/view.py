"""How model-visible events change the model's view: append, or replace a span of it.

Every message of a model request comes from an event of a model-visible type. Each such type
declares its effect on the view: the message types append unless their data says otherwise
(`surface`), and `view/rewrite` always names the span it replaces. The projection refuses an
event whose declared effect cannot apply, so nothing reaches the model that the log cannot
rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, cast

# typing_extensions: pydantic checks stored data against these TypedDicts (Python < 3.12).
from typing_extensions import TypedDict

from ..llm.types import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .events import SessionDataError
from .kinds import EventKind

SURFACE: Final = "surface"
"""The data key of a model-visible event that declares its effect on the view."""
APPEND: Final = "append"


class SurfaceReplace(TypedDict):
    """Replace the view's messages whose keys lie in [start, end] (event seqs)."""

    op: Literal["replace"]
    start: int
    end: int


Surface = Literal["append"] | SurfaceReplace


class MessageData(TypedDict, total=False):
    """A message as event data (inside view/rewrite)."""

    role: Literal["user", "assistant", "tool"]
    content: str
    source: str
    text: str
    reasoning: str | None
    tool_calls: Sequence[Mapping[str, str]]
    call_id: str
    is_error: bool


class ViewRewriteData(TypedDict, total=False):
    """The messages that replace the span `surface` names (`compaction`: the compaction that
    pruned them)."""

    surface: Surface
    messages: Sequence[MessageData]
    by: str
    turn: int
    step: int
    compaction: str


VIEW_REWRITE: Final = EventKind("view/rewrite", ViewRewriteData)
"""Model-visible: a listener (or a strategy) rewrote the view; its messages replace the span
`surface` names."""


class ViewError(SessionDataError):
    """A model-visible event whose effect on the view cannot apply (a replace of nothing)."""


class UnloggedViewError(RuntimeError):
    """A request about to be sent differs from the one the log rebuilds: something reached
    the model without being logged."""


def replace_op(start: int, end: int) -> SurfaceReplace:
    """The surface of an event that replaces the view's span [start, end] (message keys)."""
    return {"op": "replace", "start": start, "end": end}


def check_surface(event_type: str, data: Mapping[str, Any], seq: int, default: str | None) -> None:
    """Refuse a model-visible event that does not declare a valid effect on the view."""
    surface = data.get(SURFACE)
    if surface is None:
        if default is None:
            raise SessionDataError(
                f"{event_type} must declare its effect on the model's view in data['surface']"
                " ('append' or {op: 'replace', start, end})"
            )
        return
    if surface == APPEND:
        return
    span = cast(Mapping[str, Any], surface) if isinstance(surface, Mapping) else None
    if span is not None and span.get("op") == "replace":
        start: Any = span.get("start")
        end: Any = span.get("end")
        if (
            type(start) is int
            and type(end) is int
            and 0 <= start <= end < seq  # a span of what came before this event
        ):
            return
        raise SessionDataError(
            f"{event_type} data['surface'] replaces [{start!r}, {end!r}]: a span needs"
            f" 0 <= start <= end < {seq} (this event's seq)"
        )
    raise SessionDataError(
        f"{event_type} data['surface'] must be 'append' or {{op: 'replace', start, end}},"
        f" got {surface!r}"
    )


def message_to_data(message: Message) -> MessageData:
    """The event-data form of a message (the inverse of `data_to_message`)."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content, "source": message.source}
    if isinstance(message, AssistantMessage):
        data: MessageData = {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
            ],
        }
        if message.reasoning is not None:
            data["reasoning"] = message.reasoning
        return data
    return {
        "role": "tool",
        "call_id": message.call_id,
        "content": message.content,
        "is_error": message.is_error,
    }


def data_to_message(data: Mapping[str, Any]) -> Message:
    """A message from its event-data form; raises ViewError on a malformed one."""
    role = data.get("role")
    try:
        if role == "user":
            return UserMessage(content=data["content"], source=data.get("source", "user"))
        if role == "assistant":
            calls: Sequence[Mapping[str, str]] = data.get("tool_calls", ())
            return AssistantMessage(
                text=data["text"],
                reasoning=data.get("reasoning"),
                tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in calls),
            )
        if role == "tool":
            return ToolMessage(
                call_id=data["call_id"],
                content=data["content"],
                is_error=data.get("is_error", False),
            )
    except (KeyError, TypeError) as exc:
        raise ViewError(f"a {role} message in view data lacks {exc}") from None
    raise ViewError(f"a message in view data has an unknown role {role!r}")

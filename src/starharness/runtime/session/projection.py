"""The model's history as an incremental projection of the session log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..llm.types import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .event_types import (
    ASSISTANT_MESSAGE,
    REQUEST_CONTEXT,
    REQUEST_HEADER,
    TOOL_RESULT,
    USER_MESSAGE,
    AssistantMessageData,
    ToolResultData,
    UserMessageData,
    payload,
)
from .events import SessionDataError, SessionEvent

_REQUIRED: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    USER_MESSAGE: (("content", str),),
    ASSISTANT_MESSAGE: (("text", str),),
    TOOL_RESULT: (("call_id", str), ("content", str)),
}
_OPTIONAL: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    USER_MESSAGE: (("source", str),),
    ASSISTANT_MESSAGE: (("reasoning", (str, type(None))), ("tool_calls", tuple)),
    TOOL_RESULT: (("is_error", bool),),
}
_CALL_FIELDS = ("id", "name", "arguments")

MODEL_VISIBLE = frozenset(_REQUIRED)
"""The event types that become messages (their data is checked when appended)."""


def check_model_visible(event_type: str, data: Mapping[str, Any]) -> None:
    """Refuse frozen data of a model-visible event that could not become a message."""
    required = _REQUIRED.get(event_type)
    if required is None:
        return
    for name, kind in required:
        if not isinstance(data.get(name), kind):
            raise SessionDataError(
                f"{event_type} needs data[{name!r}] of type {_kind_name(kind)},"
                f" got {type(data.get(name)).__name__}"
            )
    for name, kind in _OPTIONAL[event_type]:
        if name in data and not isinstance(data[name], kind):
            raise SessionDataError(
                f"{event_type} data[{name!r}] must be {_kind_name(kind)},"
                f" got {type(data[name]).__name__}"
            )
    if event_type == ASSISTANT_MESSAGE:
        calls: tuple[Any, ...] = data.get("tool_calls", ())
        for index, call in enumerate(calls):
            if not isinstance(call, Mapping) or any(
                not isinstance(call.get(field), str)  # pyright: ignore[reportUnknownMemberType]
                for field in _CALL_FIELDS
            ):
                raise SessionDataError(
                    f"{event_type} data['tool_calls'][{index}] needs string id, name and arguments"
                )


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return "array" if kind is tuple else kind.__name__


def event_to_message(event: SessionEvent) -> Message | None:
    """The model-visible message an event stands for, or None for everything else."""
    kind = event.type
    if kind == USER_MESSAGE:
        user = payload(event, UserMessageData)
        return UserMessage(content=user["content"], source=user.get("source", "user"))
    if kind == ASSISTANT_MESSAGE:
        assistant = payload(event, AssistantMessageData)
        return AssistantMessage(
            text=assistant["text"],
            reasoning=assistant.get("reasoning"),
            tool_calls=tuple(
                ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"])
                for call in assistant.get("tool_calls", ())
            ),
        )
    if kind == TOOL_RESULT:
        result = payload(event, ToolResultData)
        return ToolMessage(
            call_id=result["call_id"],
            content=result["content"],
            is_error=result.get("is_error", False),
        )
    return None


class Projection:
    """Feeds events into a message list, each event once; the list object is kept and grown."""

    __slots__ = ("examined", "messages", "position")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.position = 0
        """Index of the next event to process."""
        self.examined = 0
        """How many events this projection has looked at in total (work done, for tests)."""

    def feed(self, events: Sequence[SessionEvent]) -> list[Message]:
        """Process the events after the last processed one; returns the (same) message list."""
        messages = self.messages
        start, end = self.position, len(events)
        visible = MODEL_VISIBLE
        for index in range(start, end):
            event = events[index]
            if event.type in visible:
                message = event_to_message(event)
                if message is not None:
                    messages.append(message)
        self.examined += end - start
        self.position = end
        return messages


RebuiltRequest = tuple[Mapping[str, Any] | None, list[Message]]


def rebuild_requests(events: Iterable[SessionEvent]) -> list[RebuiltRequest]:
    """The requests a log records: for each request/context event, the request/header data then
    in force (None if none was logged yet) and the messages projected from the events before it."""
    requests: list[RebuiltRequest] = []
    header: Mapping[str, Any] | None = None
    messages: list[Message] = []
    for event in events:
        if event.type == REQUEST_CONTEXT:
            requests.append((header, list(messages)))
        elif event.type == REQUEST_HEADER:
            header = event.data
        else:
            message = event_to_message(event)
            if message is not None:
                messages.append(message)
    return requests

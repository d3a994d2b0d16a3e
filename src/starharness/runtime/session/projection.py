"""The model's history as an incremental projection of the session log."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..llm.types import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .event_types import (
    ASSISTANT_MESSAGE,
    REQUEST_CONTEXT,
    REQUEST_HEADER,
    TOOL_RESULT,
    USER_MESSAGE,
)
from .events import SessionDataError, SessionEvent
from .kinds import payload
from .view import APPEND, SURFACE, VIEW_REWRITE, ViewError, check_surface, data_to_message

# Keyed by the plain names events hold: a set or dict lookup that finds a str subclass key
# (an EventKind) compares it the slow way, and this runs on every append.
_REQUIRED: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    USER_MESSAGE.name: (("content", str),),
    ASSISTANT_MESSAGE.name: (("text", str),),
    TOOL_RESULT.name: (("call_id", str), ("content", str)),
    VIEW_REWRITE.name: (("messages", tuple),),
}
_OPTIONAL: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    USER_MESSAGE.name: (("source", str),),
    ASSISTANT_MESSAGE.name: (("reasoning", (str, type(None))), ("tool_calls", tuple)),
    TOOL_RESULT.name: (("is_error", bool),),
    VIEW_REWRITE.name: (("by", str),),
}
_CALL_FIELDS = ("id", "name", "arguments")

SURFACE_DEFAULTS: Mapping[str, str | None] = {
    USER_MESSAGE.name: APPEND,
    ASSISTANT_MESSAGE.name: APPEND,
    TOOL_RESULT.name: APPEND,
    VIEW_REWRITE.name: None,
}
"""Each model-visible type's effect on the view when its data names none (None: it must)."""

MODEL_VISIBLE = frozenset(_REQUIRED)
"""The event types that become messages (their data is checked when appended)."""


def check_model_visible(event_type: str, data: Mapping[str, Any], seq: int | None = None) -> None:
    """Refuse frozen data of a model-visible event that could not become a message, or that
    does not declare a valid effect on the view (checked when `seq` is given)."""
    required = _REQUIRED.get(event_type)
    if required is None:
        return
    if seq is not None:
        check_surface(event_type, data, seq, SURFACE_DEFAULTS[event_type])
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
    elif event_type == VIEW_REWRITE:
        for item in data["messages"]:
            if not isinstance(item, Mapping):
                raise SessionDataError(f"{event_type} data['messages'] must hold mappings")
            data_to_message(item)  # pyright: ignore[reportUnknownArgumentType]


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return "array" if kind is tuple else kind.__name__


def event_to_message(event: SessionEvent) -> Message | None:
    """The model-visible message an event stands for, or None for everything else (and for
    view/rewrite, which may stand for several: see `event_messages`)."""
    kind = event.type
    if kind == USER_MESSAGE:
        user = payload(event, USER_MESSAGE)
        return UserMessage(content=user["content"], source=user.get("source", "user"))
    if kind == ASSISTANT_MESSAGE:
        assistant = payload(event, ASSISTANT_MESSAGE)
        return AssistantMessage(
            text=assistant["text"],
            reasoning=assistant.get("reasoning"),
            tool_calls=tuple(
                ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"])
                for call in assistant.get("tool_calls", ())
            ),
        )
    if kind == TOOL_RESULT:
        result = payload(event, TOOL_RESULT)
        return ToolMessage(
            call_id=result["call_id"],
            content=result["content"],
            is_error=result.get("is_error", False),
        )
    return None


def event_messages(event: SessionEvent) -> tuple[Message, ...]:
    """Every message a model-visible event stands for (none for other events)."""
    if event.type == VIEW_REWRITE:
        items: Sequence[Mapping[str, Any]] = event.data["messages"]
        return tuple(data_to_message(item) for item in items)
    message = event_to_message(event)
    return () if message is None else (message,)


class Projection:
    """Feeds events into a message list, each event once; the list object is kept and changed
    in place. `keys[i]` is the seq of the event message i came from, or the start of the span
    its event replaced, so keys stay sorted and a later replace finds its span by bisection.
    """

    __slots__ = ("examined", "keys", "messages", "position")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.keys: list[int] = []
        self.position = 0
        """Index of the next event to process."""
        self.examined = 0
        """How many events this projection has looked at in total (work done, for tests)."""

    def feed(self, events: Sequence[SessionEvent]) -> list[Message]:
        """Process the events after the last processed one; returns the (same) message list."""
        messages = self.messages
        keys = self.keys
        start, end = self.position, len(events)
        visible = MODEL_VISIBLE
        for index in range(start, end):
            event = events[index]
            if event.type not in visible:
                continue
            surface = event.data.get(SURFACE)
            if surface is None or surface == APPEND:
                for message in event_messages(event):
                    messages.append(message)
                    keys.append(event.seq)
            else:
                self._replace(event, surface)
        self.examined += end - start
        self.position = end
        return messages

    def _replace(self, event: SessionEvent, surface: Mapping[str, Any]) -> None:
        first: int = surface["start"]
        last: int = surface["end"]
        keys = self.keys
        low = bisect_left(keys, first)
        high = bisect_right(keys, last)
        if low == high:
            raise ViewError(
                f"{event.type} #{event.seq} replaces the span [{first}, {last}] of the view,"
                " which holds no message"
            )
        new = event_messages(event)
        self.messages[low:high] = new
        keys[low:high] = [first] * len(new)


RebuiltRequest = tuple[Mapping[str, Any] | None, list[Message]]


def rebuild_requests(events: Iterable[SessionEvent]) -> list[RebuiltRequest]:
    """The requests a log records: for each request/context event, the request/header data then
    in force (None if none was logged yet) and the messages projected from the events before it."""
    requests: list[RebuiltRequest] = []
    header: Mapping[str, Any] | None = None
    projection = Projection()
    pending: list[SessionEvent] = []
    for event in events:
        if event.type == REQUEST_CONTEXT:
            projection.feed(pending)
            requests.append((header, list(projection.messages)))
        elif event.type == REQUEST_HEADER:
            header = event.data
        pending.append(event)
    return requests

"""Closing a turn that a crash cut short, so a resumed session is consistent again."""

from __future__ import annotations

from typing import Any

from .event_types import (
    ASSISTANT_MESSAGE,
    INTERRUPTED,
    STEP_END,
    STEP_START,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    AssistantMessageData,
    StepData,
    ToolResultData,
    TurnStartData,
    payload,
)
from .events import SessionEvent
from .session import Session

INTERRUPTED_TOOL_MESSAGE = "interrupted before the tool call finished"


def close_interrupted_turn(session: Session) -> list[SessionEvent]:
    """If the log ends inside a turn, append what closes it and return the appended events.

    Tool calls still owed a result get an error result (a model request must answer every call),
    an open step gets its step/end, and the turn ends with reason "interrupted".
    """
    events = session.events
    start: SessionEvent | None = None
    for event in reversed(events):
        if event.type == TURN_END:
            return []
        if event.type == TURN_START:
            start = event
            break
    if start is None:
        return []
    turn = payload(start, TurnStartData)["turn"]
    owed: dict[str, tuple[Any, str]] = {}
    open_step: Any = None
    for event in events[start.seq + 1 :]:
        if event.type == ASSISTANT_MESSAGE:
            message = payload(event, AssistantMessageData)
            for call in message.get("tool_calls", ()):
                owed[call["id"]] = (message.get("step"), call["name"])
        elif event.type == TOOL_RESULT:
            owed.pop(payload(event, ToolResultData)["call_id"], None)
        elif event.type == STEP_START:
            open_step = payload(event, StepData).get("step")
        elif event.type == STEP_END:
            open_step = None
    appended: list[SessionEvent] = []
    for call_id, (step, name) in owed.items():
        appended.append(
            session.append(
                TOOL_RESULT,
                {
                    "turn": turn,
                    "step": step,
                    "call_id": call_id,
                    "name": name,
                    "content": f"Error: {INTERRUPTED_TOOL_MESSAGE}",
                    "is_error": True,
                    "error": {"code": INTERRUPTED, "message": INTERRUPTED_TOOL_MESSAGE},
                },
            )
        )
    if open_step is not None:
        appended.append(session.append(STEP_END, {"turn": turn, "step": open_step}))
    appended.append(session.append(TURN_END, {"turn": turn, "reason": INTERRUPTED}))
    return appended

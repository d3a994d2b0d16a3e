"""Closing a turn that a crash cut short, so a resumed session is consistent again."""

from __future__ import annotations

from .event_types import (
    ASSISTANT_MESSAGE,
    INTERRUPTED,
    STEP_END,
    STEP_START,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    StepEndData,
    ToolErrorData,
    ToolResultData,
    TurnEndData,
)
from .events import SessionEvent
from .kinds import payload
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
    turn = payload(start, TURN_START)["turn"]
    owed: dict[str, tuple[int, str]] = {}
    open_step: int | None = None
    for event in events[start.seq + 1 :]:
        if event.type == ASSISTANT_MESSAGE:
            message = payload(event, ASSISTANT_MESSAGE)
            for call in message["tool_calls"]:
                owed[call["id"]] = (message["step"], call["name"])
        elif event.type == TOOL_RESULT:
            owed.pop(payload(event, TOOL_RESULT)["call_id"], None)
        elif event.type == STEP_START:
            open_step = payload(event, STEP_START)["step"]
        elif event.type == STEP_END:
            open_step = None
    appended: list[SessionEvent] = []
    for call_id, (step, name) in owed.items():
        result = ToolResultData(
            turn=turn,
            step=step,
            call_id=call_id,
            name=name,
            content=f"Error: {INTERRUPTED_TOOL_MESSAGE}",
            is_error=True,
            error=ToolErrorData(code=INTERRUPTED, message=INTERRUPTED_TOOL_MESSAGE),
        )
        appended.append(session.log(TOOL_RESULT, result))
    if open_step is not None:
        appended.append(session.log(STEP_END, StepEndData(turn=turn, step=open_step)))
    appended.append(session.log(TURN_END, TurnEndData(turn=turn, reason=INTERRUPTED)))
    return appended

"""Session log events as protocol updates, and a session's log as the history a client shows.

The one place that reads session event data for the protocol; the payload shapes are those in
runtime/session/event_types.py, context/events.py (plans) and sandbox/keys.py (jobs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..context.events import PLAN_CHANGE
from ..sandbox.keys import COMMAND_RUN, JOB_STATE
from ..session import SessionEvent, payload
from ..session import event_types as ev
from .models import (
    ApprovalAsked,
    ApprovalDecided,
    HistoryItem,
    JobUpdated,
    PlanStep,
    PlanUpdated,
    ReasoningDelta,
    TextDelta,
    ToolCalled,
    ToolResulted,
    TurnEnded,
    TurnStarted,
    WireModel,
)

_VISIBLE_SOURCES = frozenset({"user"})
"""User messages a person typed; context and plugin messages are not shown as chat."""


def content_text(content: Any) -> str:
    """A tool result's content as text (structured content as compact JSON)."""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"), default=str)


def update_for(session_id: str, event: SessionEvent) -> WireModel | None:
    """The update a client sees for one logged event, or None for events it does not see."""
    kind = event.type
    if kind == ev.ASSISTANT_CHUNK:
        # Annotated rather than payload(): this runs for every streamed chunk.
        data = event.data
        chunk: ev.ChunkData = data["chunk"]
        chunk_type = chunk["type"]
        if chunk_type == "text-delta":
            return TextDelta(session_id=session_id, turn=data["turn"], text=chunk.get("text", ""))
        if chunk_type == "reasoning-delta":
            return ReasoningDelta(
                session_id=session_id, turn=data["turn"], text=chunk.get("text", "")
            )
        return None
    if kind == ev.TOOL_CALL:
        data = payload(event, ev.TOOL_CALL)
        return ToolCalled(
            session_id=session_id,
            turn=data["turn"],
            call_id=data["call_id"],
            name=data["name"],
            arguments=data["arguments"],
        )
    if kind == ev.TOOL_RESULT:
        data = payload(event, ev.TOOL_RESULT)
        return ToolResulted(
            session_id=session_id,
            turn=data["turn"],
            call_id=data["call_id"],
            name=data["name"],
            content=content_text(data["content"]),
            is_error=bool(data["is_error"]),
        )
    if kind == ev.TURN_START:
        return TurnStarted(session_id=session_id, turn=payload(event, ev.TURN_START)["turn"])
    if kind == ev.TURN_END:
        data = payload(event, ev.TURN_END)
        error = data.get("error")
        return TurnEnded(
            session_id=session_id,
            turn=data["turn"],
            reason=data["reason"],
            error=None if error is None else str(error),
        )
    if kind == ev.APPROVAL_ASKED:
        data = payload(event, ev.APPROVAL_ASKED)
        return ApprovalAsked(
            session_id=session_id,
            call_id=data["call_id"],
            tool=data["tool"],
            arguments=data["arguments"],
            reason=data["reason"] or "",
        )
    if kind == ev.APPROVAL_DECIDED:
        data = payload(event, ev.APPROVAL_DECIDED)
        return ApprovalDecided(
            session_id=session_id,
            call_id=data["call_id"],
            tool=data["tool"],
            decision=str(data["decision"]),
            message=data["message"] or "",
        )
    return _work_update(session_id, event)


def _work_update(session_id: str, event: SessionEvent) -> PlanUpdated | JobUpdated | None:
    """A plan or job update for a plan/change, a job's command/run or a job/state event."""
    kind = event.type
    if kind == PLAN_CHANGE:
        data = payload(event, PLAN_CHANGE)
        return PlanUpdated(
            session_id=session_id,
            revision=data["revision"],
            items=[PlanStep.model_validate(item) for item in data["items"]],
        )
    if kind == COMMAND_RUN:
        run = payload(event, COMMAND_RUN)
        job = run.get("job")
        if job is None:
            return None
        return JobUpdated(
            session_id=session_id, job_id=job, command=run["command"], state="running"
        )
    if kind == JOB_STATE:
        data = payload(event, JOB_STATE)
        return JobUpdated(
            session_id=session_id,
            job_id=data["job"],
            command=data["command"],
            state=data["state"],
            exit_code=data["exit_code"],
            tail=data["tail"],
        )
    return None


def work_of(
    session_id: str, events: Iterable[SessionEvent]
) -> tuple[PlanUpdated | None, list[JobUpdated]]:
    """A session's current plan and each job's latest state, folded from its log."""
    plan: PlanUpdated | None = None
    jobs: dict[str, JobUpdated] = {}
    for event in events:
        if event.type not in _WORK_EVENTS:
            continue
        update = _work_update(session_id, event)
        if isinstance(update, PlanUpdated):
            plan = update
        elif update is not None:
            jobs[update.job_id] = update
    return plan, list(jobs.values())


_WORK_EVENTS = frozenset({PLAN_CHANGE, COMMAND_RUN, JOB_STATE})


def history_of(events: Iterable[SessionEvent]) -> list[HistoryItem]:
    """What a resumed chat shows: the person's messages, final texts, and each tool call."""
    items: list[HistoryItem] = []
    arguments: dict[str, str] = {}
    for event in events:
        kind = event.type
        if kind == ev.USER_MESSAGE:
            user = payload(event, ev.USER_MESSAGE)
            if user.get("source") in _VISIBLE_SOURCES:
                items.append(HistoryItem(role="user", text=user["content"]))
        elif kind == ev.ASSISTANT_MESSAGE:
            text = payload(event, ev.ASSISTANT_MESSAGE)["text"]
            if text:
                items.append(HistoryItem(role="assistant", text=text))
        elif kind == ev.TOOL_CALL:
            call = payload(event, ev.TOOL_CALL)
            arguments[call["call_id"]] = call["arguments"]
        elif kind == ev.TOOL_RESULT:
            data = payload(event, ev.TOOL_RESULT)
            call_id = data["call_id"]
            items.append(
                HistoryItem(
                    role="tool",
                    text=content_text(data["content"]),
                    tool=data["name"],
                    call_id=call_id,
                    arguments=arguments.pop(call_id, ""),
                    is_error=bool(data["is_error"]),
                )
            )
    return items


def title_of(events: Iterable[SessionEvent], limit: int = 80) -> str:
    """A session's first user message, shortened: its title in listings."""
    for event in events:
        if event.type != ev.USER_MESSAGE:
            continue
        user = payload(event, ev.USER_MESSAGE)
        if user.get("source") in _VISIBLE_SOURCES:
            text = " ".join(user["content"].split())
            return text if len(text) <= limit else text[:limit] + "…"
    return ""

"""A compaction a crash cut short: finish it from what the log holds, or close it unfinished."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..session import SURFACE, Session, SessionEvent, replace_op
from ..session import event_types as ev
from .events import (
    COMPACTION_END,
    COMPACTION_START,
    COMPACTION_SUMMARY,
    SUMMARY_SOURCE,
)

SUMMARY_PREFIX = "Summary of the earlier conversation (older messages were compacted):\n\n"


def summary_message_data(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The user/message that puts a compaction/summary into the view in place of its span."""
    return {
        "content": SUMMARY_PREFIX + summary["text"],
        "source": SUMMARY_SOURCE,
        SURFACE: replace_op(summary["start"], summary["end"]),
        "compaction": summary["id"],
    }


def recover_compaction(session: Session) -> list[SessionEvent]:
    """Close every compaction/start without an end: a logged summary is put in place (once),
    otherwise the compaction ends `interrupted` and the view is as before it."""
    open_: dict[str, SessionEvent] = {}
    summaries: dict[str, SessionEvent] = {}
    placed: set[str] = set()
    for event in session.events:
        kind = event.type
        if kind == COMPACTION_START:
            open_[event.data["id"]] = event
        elif kind == COMPACTION_END:
            open_.pop(event.data["id"], None)
        elif kind == COMPACTION_SUMMARY:
            summaries[event.data["id"]] = event
        elif kind == ev.USER_MESSAGE and "compaction" in event.data:
            placed.add(event.data["compaction"])
    appended: list[SessionEvent] = []
    for cid in open_:
        summary = summaries.get(cid)
        if summary is not None and cid not in placed:
            appended.append(session.append(ev.USER_MESSAGE, summary_message_data(summary.data)))
        outcome = "recovered" if summary is not None else "interrupted"
        appended.append(session.append(COMPACTION_END, {"id": cid, "outcome": outcome}))
    return appended

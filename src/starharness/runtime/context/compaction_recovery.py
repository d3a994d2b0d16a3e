"""A compaction a crash cut short: finish it from what the log holds, or close it unfinished."""

from __future__ import annotations

from ..session import Session, SessionEvent, payload, replace_op
from ..session import event_types as ev
from .events import (
    COMPACTION_END,
    COMPACTION_START,
    COMPACTION_SUMMARY,
    SUMMARY_SOURCE,
    CompactionEndData,
    CompactionSummaryData,
)

SUMMARY_PREFIX = "Summary of the earlier conversation (older messages were compacted):\n\n"


def summary_message_data(summary: CompactionSummaryData) -> ev.UserMessageData:
    """The user/message that puts a compaction/summary into the view in place of its span."""
    return ev.UserMessageData(
        content=SUMMARY_PREFIX + summary["text"],
        source=SUMMARY_SOURCE,
        surface=replace_op(summary["start"], summary["end"]),
        compaction=summary["id"],
    )


def recover_compaction(session: Session) -> list[SessionEvent]:
    """Close every compaction/start without an end: a logged summary is put in place (once),
    otherwise the compaction ends `interrupted` and the view is as before it."""
    open_: dict[str, None] = {}  # a dict: the order they opened in
    summaries: dict[str, CompactionSummaryData] = {}
    placed: set[str] = set()
    for event in session.events:
        kind = event.type
        if kind == COMPACTION_START:
            open_[payload(event, COMPACTION_START)["id"]] = None
        elif kind == COMPACTION_END:
            open_.pop(payload(event, COMPACTION_END).get("id", ""), None)
        elif kind == COMPACTION_SUMMARY:
            summary = payload(event, COMPACTION_SUMMARY)
            summaries[summary["id"]] = summary
        elif kind == ev.USER_MESSAGE:
            compaction = payload(event, ev.USER_MESSAGE).get("compaction")
            if compaction is not None:
                placed.add(compaction)
    appended: list[SessionEvent] = []
    for cid in open_:
        summary = summaries.get(cid)
        if summary is not None and cid not in placed:
            appended.append(session.log(ev.USER_MESSAGE, summary_message_data(summary)))
        outcome = "recovered" if summary is not None else "interrupted"
        appended.append(session.log(COMPACTION_END, CompactionEndData(id=cid, outcome=outcome)))
    return appended

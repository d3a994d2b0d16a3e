"""The session event types of context management, with the shape of their data.

All of them are log-only: what reaches the model from them does so through a model-visible
event (a tool/result, a user/message with a `surface`, a view/rewrite) logged beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

# typing_extensions: pydantic checks stored data against these TypedDicts (Python < 3.12).
from typing_extensions import TypedDict

from ..session import EventKind

SUMMARY_SOURCE: Final = "summary"
"""`source` of the user/message that carries a compaction summary into the view."""


class SpillStoredData(TypedDict):
    id: int
    call_id: str
    name: str
    chars: int
    bytes: int
    content: str


CompactionTrigger = Literal["pressure", "overflow", "manual"]
CompactionOutcome = Literal[
    "pruned", "summarized", "forgot", "nothing", "failed", "interrupted", "recovered"
]


class CompactionStartData(TypedDict):
    id: str
    trigger: CompactionTrigger
    tokens_before: int
    window: int | None


class CompactionPruneData(TypedDict):
    id: str
    pruned: int
    chars_saved: int


class CompactionSummaryData(TypedDict):
    id: str
    text: str
    start: int
    end: int
    messages: int
    model: str
    system: str
    item_chars: int


class CompactionEndData(TypedDict, total=False):
    id: str
    outcome: CompactionOutcome
    tokens_before: int
    tokens_after: int
    duration_ms: float
    error: str


class GoalChangeData(TypedDict):
    revision: int
    goal: str
    status: Literal["active", "done", "dropped"]
    by: str


class PlanItemData(TypedDict):
    id: str
    text: str
    status: Literal["pending", "in_progress", "done"]


class PlanChangeData(TypedDict):
    revision: int
    items: list[PlanItemData]
    by: str


class SubagentStartData(TypedDict):
    child: str
    seed_length: int
    task: str
    tools: list[str]


class _SubagentEndFields(TypedDict):
    child: str
    status: Literal["ok", "error"]


class SubagentEndData(_SubagentEndFields, total=False):
    """`reason`: the child's turn/end reason, "timeout" or "interrupted"; `text`: its answer."""

    reason: str
    text: str


SPILL_STORED: Final = EventKind("spill/stored", SpillStoredData)
"""The whole result of one tool call, too big to show inline; `id` counts the session's spills."""
COMPACTION_START: Final = EventKind("compaction/start", CompactionStartData)
COMPACTION_PRUNE: Final = EventKind("compaction/prune", CompactionPruneData)
COMPACTION_SUMMARY: Final = EventKind("compaction/summary", CompactionSummaryData)
COMPACTION_END: Final = EventKind("compaction/end", CompactionEndData)
GOAL_CHANGE: Final = EventKind("goal/change", GoalChangeData)
PLAN_CHANGE: Final = EventKind("plan/change", PlanChangeData)
SUBAGENT_START: Final = EventKind("subagent/start", SubagentStartData)
SUBAGENT_END: Final = EventKind("subagent/end", SubagentEndData)

KINDS: Final[tuple[EventKind[Any], ...]] = (
    SPILL_STORED,
    COMPACTION_START,
    COMPACTION_PRUNE,
    COMPACTION_SUMMARY,
    COMPACTION_END,
    GOAL_CHANGE,
    PLAN_CHANGE,
    SUBAGENT_START,
    SUBAGENT_END,
)
"""Each of these session event types (the docs are made from it)."""

PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {kind: kind.shape for kind in KINDS}
"""Each context-management session event type and the TypedDict of its data (for the docs)."""

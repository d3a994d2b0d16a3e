"""The session event types of context management, with the shape of their data.

All of them are log-only: what reaches the model from them does so through a model-visible
event (a tool/result, a user/message with a `surface`, a view/rewrite) logged beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

SPILL_STORED: Final = "spill/stored"
"""The whole result of one tool call, too big to show inline; `id` counts the session's spills."""
COMPACTION_START: Final = "compaction/start"
COMPACTION_PRUNE: Final = "compaction/prune"
COMPACTION_SUMMARY: Final = "compaction/summary"
COMPACTION_END: Final = "compaction/end"
GOAL_CHANGE: Final = "goal/change"
PLAN_CHANGE: Final = "plan/change"
SUBAGENT_START: Final = "subagent/start"
SUBAGENT_END: Final = "subagent/end"

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
CompactionOutcome = Literal["pruned", "summarized", "nothing", "failed", "interrupted", "recovered"]


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


class SubagentEndData(TypedDict, total=False):
    child: str
    status: Literal["ok", "error"]
    reason: str
    text: str


PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {
    SPILL_STORED: SpillStoredData,
    COMPACTION_START: CompactionStartData,
    COMPACTION_PRUNE: CompactionPruneData,
    COMPACTION_SUMMARY: CompactionSummaryData,
    COMPACTION_END: CompactionEndData,
    GOAL_CHANGE: GoalChangeData,
    PLAN_CHANGE: PlanChangeData,
    SUBAGENT_START: SubagentStartData,
    SUBAGENT_END: SubagentEndData,
}
"""Each context-management session event type and the TypedDict of its data (for the docs)."""

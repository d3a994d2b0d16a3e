"""Goals and plans on the session log: change events folded into the current state, every
change naming the revision it expects (compare-and-set), so a stale writer is refused."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..errors import StarHarnessError
from ..session import Session, SessionEvent, payload
from .events import GOAL_CHANGE, PLAN_CHANGE, GoalChangeData, PlanChangeData, PlanItemData

if TYPE_CHECKING:
    from ..loop import Agent

PLAN_STATUSES: Final = ("pending", "in_progress", "done")
GOAL_STATUSES: Final = ("active", "done", "dropped")
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}


class StaleRevisionError(StarHarnessError):
    """A change expected a revision that is no longer the current one."""

    def __init__(self, what: str, expected: int, current: int) -> None:
        super().__init__(
            f"the {what} is at revision {current}, not {expected}: read it again and retry"
        )
        self.expected = expected
        self.current = current


@dataclass(frozen=True, slots=True)
class PlanItem:
    id: str
    text: str
    status: str = "pending"


@dataclass(slots=True)
class WorkState:
    """The fold of a session's goal/change and plan/change events."""

    goal: str = ""
    goal_status: str = "active"
    goal_revision: int = 0
    plan: tuple[PlanItem, ...] = ()
    plan_revision: int = 0
    position: int = 0
    """Events folded so far."""

    def feed(self, events: Sequence[SessionEvent]) -> WorkState:
        for index in range(self.position, len(events)):
            event = events[index]
            if event.type == GOAL_CHANGE:
                goal = payload(event, GOAL_CHANGE)
                self.goal, self.goal_status = goal["goal"], goal["status"]
                self.goal_revision = goal["revision"]
            elif event.type == PLAN_CHANGE:
                plan = payload(event, PLAN_CHANGE)
                self.plan = tuple(PlanItem(i["id"], i["text"], i["status"]) for i in plan["items"])
                self.plan_revision = plan["revision"]
        self.position = len(events)
        return self


@dataclass(slots=True)
class WorkBook:
    """Folded state per session, brought up to date on each read (each event folded once)."""

    states: dict[str, WorkState] = field(default_factory=dict[str, WorkState])

    def state(self, session: Session) -> WorkState:
        state = self.states.get(session.id)
        if state is None or state.position > len(session.events):
            state = self.states[session.id] = WorkState()
        return state.feed(session.events)

    def forget(self, session_id: str) -> None:
        self.states.pop(session_id, None)

    def change_goal(
        self, agent: Agent, goal: str, status: str, expected: int, by: str = "tool"
    ) -> WorkState:
        state = self.state(agent.session)
        if expected != state.goal_revision:
            raise StaleRevisionError("goal", expected, state.goal_revision)
        if status not in GOAL_STATUSES:
            raise ValueError(f"a goal's status is one of {', '.join(GOAL_STATUSES)}")
        agent.log(
            GOAL_CHANGE, GoalChangeData(revision=expected + 1, goal=goal, status=status, by=by)
        )
        return self.state(agent.session)

    def change_plan(
        self, agent: Agent, items: Sequence[Mapping[str, str]], expected: int, by: str = "tool"
    ) -> WorkState:
        state = self.state(agent.session)
        if expected != state.plan_revision:
            raise StaleRevisionError("plan", expected, state.plan_revision)
        seen: set[str] = set()
        logged: list[PlanItemData] = []
        for item in items:
            status = item["status"]
            if status not in PLAN_STATUSES:
                raise ValueError(f"a plan item's status is one of {', '.join(PLAN_STATUSES)}")
            if item["id"] in seen:
                raise ValueError(f"the plan names item {item['id']!r} twice")
            seen.add(item["id"])
            logged.append(PlanItemData(id=item["id"], text=item["text"], status=status))
        agent.log(PLAN_CHANGE, PlanChangeData(revision=expected + 1, items=logged, by=by))
        return self.state(agent.session)


def render_plan(items: Sequence[PlanItem] | Sequence[Mapping[str, Any]], revision: int) -> str:
    """The plan as the model and the chat UI read it."""
    lines = [f"Plan (revision {revision}):"]
    if not items:
        lines.append("  (empty)")
    for item in items:
        if isinstance(item, PlanItem):
            ident, text, status = item.id, item.text, item.status
        else:
            ident, text, status = item["id"], item["text"], item["status"]
        lines.append(f"  {_MARKS.get(status, '[?]')} {ident}. {text}")
    return "\n".join(lines)


def render_state(state: WorkState) -> str | None:
    """The goal and plan as dynamic context (None while there is neither)."""
    if not state.goal and not state.plan:
        return None
    parts: list[str] = []
    if state.goal:
        parts.append(
            f"Current goal (revision {state.goal_revision}, {state.goal_status}): {state.goal}"
        )
    if state.plan:
        parts.append(render_plan(state.plan, state.plan_revision))
    return "\n".join(parts)

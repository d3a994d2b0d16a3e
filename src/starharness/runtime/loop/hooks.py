"""The loop's hooks and live events, named the same way everywhere (`agent/...`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..kernel import Event, Hook, Waterfall
from ..llm.types import LlmRequest, Message

if TYPE_CHECKING:
    from ..session import SessionEvent
    from .agent import Agent

AgentStatus = Literal["idle", "running"]


@dataclass(slots=True)
class StepPlan:
    """What the next step will send; a pre-step listener may rewrite `messages` or veto."""

    agent: Agent
    turn: int
    step: int
    messages: list[Message]


@dataclass(slots=True)
class OutgoingRequest:
    """The request about to go out; a listener may replace `request` or veto it."""

    agent: Agent
    turn: int
    step: int
    request: LlmRequest


@dataclass(slots=True)
class TurnStopping:
    """The turn is about to complete; a listener may return a message to keep it going."""

    agent: Agent
    turn: int
    step: int
    last_text: str


@dataclass(slots=True, frozen=True)
class CompactRequest:
    """Before a step (`pressure`) or after the provider refused the request as too long
    (`overflow`): a compactor may shrink the view; it answers True when it did."""

    agent: Agent
    turn: int
    step: int
    trigger: Literal["pressure", "overflow"]


@dataclass(slots=True, frozen=True)
class StatusChange:
    agent: Agent
    status: AgentStatus


@dataclass(slots=True, frozen=True)
class LoggedEvent:
    """A session event just appended by an agent (chunks included), for live observers."""

    agent: Agent
    event: SessionEvent


PRE_STEP: Waterfall[StepPlan] = Waterfall("agent/pre-step")
REQUEST: Waterfall[OutgoingRequest] = Waterfall("agent/request")
TURN_STOPPING: Hook[TurnStopping, Message] = Hook("agent/turn-stopping")
COMPACT: Hook[CompactRequest, bool] = Hook("agent/compact")
"""Asked before every step and once after a context overflow (then the step is retried)."""
STATUS: Event[StatusChange] = Event("agent/status")
SESSION_EVENT: Event[LoggedEvent] = Event("agent/session-event")
AGENT_CREATED: Event[Any] = Event("agent/created")
AGENT_DISPOSED: Event[Any] = Event("agent/disposed")

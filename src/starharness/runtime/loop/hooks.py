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
"""Before each step's request is built: rewrite the messages it sends, or veto (the turn ends
"aborted")."""
REQUEST: Waterfall[OutgoingRequest] = Waterfall("agent/request")
"""The request about to go out (after the static part is known): replace it, or veto."""
TURN_STOPPING: Hook[TurnStopping, Message] = Hook("agent/turn-stopping")
"""Bail: the turn would complete; the first listener to answer a message keeps it going."""
COMPACT: Hook[CompactRequest, bool] = Hook("agent/compact")
"""Bail: asked before every step and once after a context overflow (then the step is retried);
answers whether it compacted."""
STATUS: Event[StatusChange] = Event("agent/status")
"""An agent went idle or started running."""
SESSION_EVENT: Event[LoggedEvent] = Event("agent/session-event")
"""Every session event an agent appends (chunks included), as it is appended."""
AGENT_CREATED: Event[Any] = Event("agent/created")
"""An agent was created (the payload is the Agent)."""
AGENT_DISPOSED: Event[Any] = Event("agent/disposed")
"""An agent was disposed (the payload is the Agent)."""

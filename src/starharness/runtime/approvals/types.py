"""The approval vocabulary: requests, the closed set of decisions, the service and its events."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from ..kernel import Event


class Decision(StrEnum):
    """Every possible answer to an approval request; there are no others (seed 001's closed set).

    An approval covers one call only: nothing is remembered, so the next call asks again.
    """

    ALLOWED_ONCE = "allowed_once"
    """A person (or the run's `--allow` list) allowed this one call."""
    REJECTED = "rejected"
    """Someone was asked and said no."""
    CANCELLED = "cancelled"
    """The question was withdrawn before an answer: the person dismissed it, or the call or
    turn was cancelled while it waited."""
    UNAVAILABLE = "unavailable"
    """No one can be asked: the `never` policy (run, mcp, CI), or no prompt is attached."""

    @property
    def allowed(self) -> bool:
        return self is Decision.ALLOWED_ONCE


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call that a policy wants a person to approve before it runs."""

    tool: str
    call_id: str
    arguments: str
    """The raw JSON arguments, as the model sent them."""
    session_id: str = ""
    reason: str = ""
    """Why the policy asks (shown to the person deciding)."""
    tags: frozenset[str] = field(default_factory=frozenset[str])


@dataclass(frozen=True, slots=True)
class ApprovalDecided:
    """A request and its answer; `message` explains a refusal to the model ("" when allowed)."""

    request: ApprovalRequest
    decision: Decision
    message: str = ""


class ApprovalService(Protocol):
    """Decides whether a tool call may run (`ctx.get(APPROVALS)`)."""

    async def decide(self, request: ApprovalRequest) -> Decision: ...

    def explain(self, request: ApprovalRequest, decision: Decision) -> str:
        """What the model reads when `decision` refuses the call."""
        ...


APPROVAL_ASKED: Event[ApprovalRequest] = Event("approval/asked")
"""A call needs approval; emitted on the calling agent's context before the service decides."""
APPROVAL_DECIDED: Event[ApprovalDecided] = Event("approval/decided")
"""The answer, emitted on the calling agent's context (the loop logs both as the session
events of the same names)."""

"""The one mapping between protocol approval answers and the runtime's approval decisions.

Kept small and separate so a change of the runtime's outcome set is one edit here.
"""

from __future__ import annotations

from ..approvals import Decision
from .models import ApprovalAnswer

_DECISIONS: dict[ApprovalAnswer, Decision] = {
    "allow_once": Decision.ALLOWED_ONCE,
    "reject": Decision.REJECTED,
    "cancel": Decision.CANCELLED,
}

NO_ANSWER = Decision.CANCELLED
"""What a waiting question is told when its session closes: withdrawn, never answered."""


def decision_for(answer: ApprovalAnswer) -> Decision:
    """The runtime decision a client's answer stands for."""
    return _DECISIONS[answer]

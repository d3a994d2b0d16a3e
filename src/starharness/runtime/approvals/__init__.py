"""runtime/approvals: whether a tool call that a policy asks about may run."""

from .ask import request_approval
from .keys import APPROVALS
from .plugin import (
    ApprovalsConfig,
    ApprovalsPlugin,
)
from .services import AskUser, InteractiveApprovals, NonInteractiveApprovals
from .types import (
    APPROVAL_ASKED,
    APPROVAL_DECIDED,
    ApprovalDecided,
    ApprovalRequest,
    ApprovalService,
    Decision,
)

__all__ = [
    "APPROVALS",
    "APPROVAL_ASKED",
    "APPROVAL_DECIDED",
    "ApprovalDecided",
    "ApprovalRequest",
    "ApprovalService",
    "ApprovalsConfig",
    "ApprovalsPlugin",
    "AskUser",
    "Decision",
    "InteractiveApprovals",
    "NonInteractiveApprovals",
    "request_approval",
]

"""The approvals package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .types import ApprovalService

APPROVALS: ServiceKey[ApprovalService] = ServiceKey(
    "approvals", "add an approvals plugin", provider="starharness.runtime.approvals:ApprovalsPlugin"
)

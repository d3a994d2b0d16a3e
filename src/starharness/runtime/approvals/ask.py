"""Ask the context's approval service about one call, reporting the question and the answer."""

from __future__ import annotations

import asyncio
import logging

from ..kernel import Context
from .keys import APPROVALS
from .types import APPROVAL_ASKED, APPROVAL_DECIDED, ApprovalDecided, ApprovalRequest, Decision

_log = logging.getLogger("starharness.runtime.approvals")


async def request_approval(ctx: Context, request: ApprovalRequest) -> ApprovalDecided:
    """Emit APPROVAL_ASKED, let `ctx.get(APPROVALS)` decide, emit APPROVAL_DECIDED and return it.

    Without an approval service, or when it fails, the answer is `unavailable`. When the
    waiting call is cancelled, `cancelled` is reported and the cancellation goes on.
    """
    ctx.emit(APPROVAL_ASKED, request)
    service = ctx.maybe(APPROVALS)
    if service is None:
        decided = ApprovalDecided(
            request,
            Decision.UNAVAILABLE,
            f"{request.tool} needs approval, and no approval service is configured",
        )
    else:
        try:
            decision = await service.decide(request)
            message = "" if decision.allowed else service.explain(request, decision)
        except asyncio.CancelledError:
            message = f"the approval of this call to {request.tool} was cancelled"
            ctx.emit(APPROVAL_DECIDED, ApprovalDecided(request, Decision.CANCELLED, message))
            raise
        except Exception as error:
            _log.exception("approval service failed for %s", request.tool)
            decision = Decision.UNAVAILABLE
            message = f"{request.tool} needs approval, and asking for it failed: {error}"
        decided = ApprovalDecided(request, decision, message)
    ctx.emit(APPROVAL_DECIDED, decided)
    return decided

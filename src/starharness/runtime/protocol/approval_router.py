"""Routes approval questions to the connection that owns the asking session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..approvals import ApprovalRequest, ApprovalService, Decision, InteractiveApprovals
from ..kernel import Disposer, once

Asker = Callable[[ApprovalRequest], Awaitable[Decision]]


class ApprovalRouter:
    """Attached to an interactive approval service, asks the owner of `request.session_id`.

    A session no connection owns gets `unavailable`, as with no one at a terminal.
    """

    def __init__(self, approvals: ApprovalService | None) -> None:
        self._owners: dict[str, Asker] = {}
        self.interactive = isinstance(approvals, InteractiveApprovals)
        self._detach: Disposer | None = (
            approvals.attach(self._ask) if isinstance(approvals, InteractiveApprovals) else None
        )

    def own(self, session_id: str, asker: Asker) -> Disposer:
        """Questions of `session_id` go to `asker` until the returned disposer runs."""
        self._owners[session_id] = asker

        def release() -> None:
            if self._owners.get(session_id) is asker:
                del self._owners[session_id]

        return once(release)

    def close(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None

    async def _ask(self, request: ApprovalRequest) -> Decision:
        asker = self._owners.get(request.session_id)
        if asker is None:
            return Decision.UNAVAILABLE
        return await asker(request)

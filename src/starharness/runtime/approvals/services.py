"""The two approval services: ask a person, or follow an `--allow TOOL` list."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from ..kernel import Disposer, once
from .types import ApprovalRequest, Decision

AskUser = Callable[[ApprovalRequest], Awaitable[Decision]]
"""Shows a request to a person and returns their decision."""


def _reason(request: ApprovalRequest) -> str:
    return f" ({request.reason})" if request.reason else ""


class InteractiveApprovals:
    """Asks a person through a callback, one question at a time.

    `allowed_always` is remembered per session and tool, so the same tool is not asked again.
    With no callback attached, the answer is `unavailable`.
    """

    def __init__(self, ask: AskUser | None = None) -> None:
        self._ask = ask
        self._always: dict[str, set[str]] = {}
        self._lock = asyncio.Lock()

    def attach(self, ask: AskUser) -> Disposer:
        """Use `ask` to reach the person (a terminal or UI attaches itself when it starts)."""
        self._ask = ask

        def detach() -> None:
            if self._ask is ask:
                self._ask = None

        return once(detach)

    def _remembered(self, request: ApprovalRequest) -> bool:
        allowed = self._always.get(request.session_id)
        return allowed is not None and request.tool in allowed

    async def decide(self, request: ApprovalRequest) -> Decision:
        if self._remembered(request):
            return Decision.ALLOWED_ALWAYS
        async with self._lock:
            # An answer given while this request waited may have been "always".
            if self._remembered(request):
                return Decision.ALLOWED_ALWAYS
            ask = self._ask
            if ask is None:
                return Decision.UNAVAILABLE
            decision = await ask(request)
        if decision is Decision.ALLOWED_ALWAYS:
            self._always.setdefault(request.session_id, set()).add(request.tool)
        return decision

    def forget(self, session_id: str) -> None:
        """Drop what a session was allowed always (when it ends)."""
        self._always.pop(session_id, None)

    def explain(self, request: ApprovalRequest, decision: Decision) -> str:
        if decision is Decision.REJECTED:
            return f"the user rejected this call to {request.tool}"
        return f"{request.tool} needs approval{_reason(request)}, and no one is here to give it"


class NonInteractiveApprovals:
    """For runs without a person: tools on the allow list run, everything else is unavailable."""

    def __init__(
        self,
        allow: Iterable[str] = (),
        *,
        hint: str = "start the run with --allow {tool} to allow it",
    ) -> None:
        self.allow = frozenset(allow)
        self._hint = hint

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision.ALLOWED_ONCE if request.tool in self.allow else Decision.UNAVAILABLE

    def explain(self, request: ApprovalRequest, decision: Decision) -> str:
        hint = self._hint.format(tool=request.tool)
        return (
            f"{request.tool} needs approval{_reason(request)}, which cannot be asked for in "
            f"this run; {hint}"
        )

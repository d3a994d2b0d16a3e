"""The two approval policies: `ask` a person, or `never` ask (an `--allow TOOL` list aside)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from ..kernel import Disposer, once
from .types import ApprovalRequest, Decision

AskUser = Callable[[ApprovalRequest], Awaitable[Decision]]
"""Shows a request to a person and returns their decision (CANCELLED when they dismiss it)."""


def _reason(request: ApprovalRequest) -> str:
    return f" ({request.reason})" if request.reason else ""


class InteractiveApprovals:
    """The `ask` policy: asks a person through an attached callback, one question at a time.

    A front end (the terminal of `chat`, a web UI) calls `attach(ask)` when it starts and the
    returned disposer when it stops. With no callback attached the answer is `unavailable`.
    """

    def __init__(self, ask: AskUser | None = None, allow: Iterable[str] = ()) -> None:
        self._ask = ask
        self.allow = frozenset(allow)
        self._lock = asyncio.Lock()

    def attach(self, ask: AskUser) -> Disposer:
        """Use `ask` to reach the person (a terminal or UI attaches itself when it starts)."""
        self._ask = ask

        def detach() -> None:
            if self._ask is ask:
                self._ask = None

        return once(detach)

    @property
    def attached(self) -> bool:
        return self._ask is not None

    async def decide(self, request: ApprovalRequest) -> Decision:
        if request.tool in self.allow:
            return Decision.ALLOWED_ONCE
        async with self._lock:
            ask = self._ask
            if ask is None:
                return Decision.UNAVAILABLE
            return await ask(request)

    def explain(self, request: ApprovalRequest, decision: Decision) -> str:
        if decision is Decision.REJECTED:
            return f"the user rejected this call to {request.tool}"
        if decision is Decision.CANCELLED:
            return f"the approval of this call to {request.tool} was cancelled"
        return f"{request.tool} needs approval{_reason(request)}, and no one is here to give it"


class NonInteractiveApprovals:
    """The `never` policy: no one is asked; tools on the allow list run, the rest are refused."""

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
            f"{request.tool} needs approval{_reason(request)}, which is never asked for in "
            f"this run (approval policy `never`); {hint}"
        )

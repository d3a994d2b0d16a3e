"""One session seen from the SDK: prompt it, iterate its updates, answer its approvals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..runtime.protocol import (
    AnswerApproval,
    ApprovalAnswer,
    CancelTurn,
    CloseSession,
    HistoryItem,
    JobUpdated,
    PlanUpdated,
    PromptParams,
    PromptResult,
    SessionOpened,
    SessionUpdate,
)
from .errors import ConnectionLostError

if TYPE_CHECKING:
    from .client import Client

_END = object()


class ClientSession:
    """A session open on a `Client`. One prompt at a time (the server refuses a second)."""

    def __init__(self, client: Client, opened: SessionOpened) -> None:
        self._client = client
        self.id = opened.session_id
        self.history: list[HistoryItem] = list(opened.history)
        self.plan: PlanUpdated | None = opened.plan
        """The plan as of opening (a resumed session's); later ones stream as `PlanUpdated`."""
        self.jobs: list[JobUpdated] = list(opened.jobs)
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def deliver(self, update: SessionUpdate) -> None:
        self._queue.put_nowait(update)

    def connection_lost(self) -> None:
        self._queue.put_nowait(_END)

    def prompt(self, text: str) -> PromptStream:
        """Start a turn; iterate the returned stream for its updates, then read `.result`."""
        future = self._client.start_request("prompt", PromptParams(session_id=self.id, text=text))
        return PromptStream(self._queue, future)

    async def answer(self, call_id: str, answer: ApprovalAnswer = "allow_once") -> None:
        """Answer an `approval.asked` update."""
        params = AnswerApproval(session_id=self.id, call_id=call_id, answer=answer)
        await self._client.request("session", params)

    async def cancel(self) -> None:
        """Cancel the running turn (it ends with reason `aborted`)."""
        await self._client.request("session", CancelTurn(session_id=self.id))

    async def close(self) -> None:
        await self._client.request("session", CloseSession(session_id=self.id))
        self._client.forget(self.id)


class PromptStream:
    """The updates of one turn, in order; `result` is set when the iteration ends."""

    def __init__(self, queue: asyncio.Queue[Any], future: asyncio.Future[Any]) -> None:
        self._queue = queue
        self._future = future
        self.result: PromptResult | None = None
        # The answer arrives after the turn's last update; the marker queues behind them.
        future.add_done_callback(lambda _: queue.put_nowait(_END))
        # A stream left early never reads a failed answer; that is not an unhandled error.
        future.add_done_callback(lambda done: done.cancelled() or done.exception())

    def __aiter__(self) -> AsyncIterator[SessionUpdate]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[SessionUpdate]:
        while True:
            item = await self._queue.get()
            if item is _END:
                if not self._future.done():
                    raise ConnectionLostError("prompt: the server went away during the turn")
                self.result = PromptResult.model_validate(self._future.result())
                return
            yield item

    async def finish(self) -> PromptResult:
        """Drain the remaining updates and return the result."""
        async for _ in self:
            pass
        assert self.result is not None
        return self.result

"""An agent: a session, an inbox, and one owned task that runs turns while input is queued."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..kernel import Context
from ..llm import LLM
from ..llm.types import ToolSchema, UserMessage
from ..session import event_types as ev
from ..telemetry import TELEMETRY
from .hooks import SESSION_EVENT, STATUS, AgentStatus, LoggedEvent, StatusChange
from .options import AgentOptions, VerifyMode

if TYPE_CHECKING:
    from ..llm import LlmService
    from ..session import EventKind, Session, SessionEvent
    from ..telemetry import Telemetry

_log = logging.getLogger("starharness.runtime.loop")

D = TypeVar("D", bound=Mapping[str, Any])


CancelKind = Literal["user", "parent", "disposed", "hook", "timeout"]
"""Who cancelled a turn (turn/end's `cause` when its reason is "aborted")."""


class CancelCause:
    """Why a turn was cancelled, and by whom."""

    __slots__ = ("kind", "reason")

    def __init__(self, kind: CancelKind, reason: str = "") -> None:
        self.kind = kind
        self.reason = reason

    def __repr__(self) -> str:
        return f"CancelCause({self.kind!r}, {self.reason!r})"


class Agent:
    """Runs turns for one session. Input goes in with `followup` and `steer`; observe via events."""

    # A server holds one per open encounter: slots, and no per-agent Event or deque blocks
    # (an empty deque allocates a 64-slot block; the queues here rarely hold more than one).
    __slots__ = (
        "_cancel_cause",
        "_closed",
        "_llm",
        "_publish",
        "_runner",
        "_telemetry",
        "_telemetry_known",
        "_turn_task",
        "ctx",
        "header",
        "id",
        "inbox",
        "last_context",
        "options",
        "resumed",
        "session",
        "status",
        "steering",
        "turn",
        "verify_view",
    )

    def __init__(
        self,
        ctx: Context,
        session: Session,
        options: AgentOptions,
        *,
        verify_override: VerifyMode | None = None,
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.options = options
        self.id = session.id
        self.inbox: list[UserMessage] = []
        self.steering: list[UserMessage] = []
        self.status: AgentStatus = "idle"
        # A new session has no log to scan (every encounter's agent starts on one).
        logged = bool(session.events)
        self.turn = self._last_turn(session) if logged else 0
        # Each dynamic context entry's text as last logged, by entry name.
        self.last_context: dict[str, str] = self._last_context(session) if logged else {}
        self.header: tuple[str, Sequence[ToolSchema]] | None = None
        self.resumed = logged
        self._runner: asyncio.Task[None] | None = None
        self._turn_task: asyncio.Task[Any] | None = None
        self._cancel_cause: CancelCause | None = None
        self._closed = False
        self._publish = ctx.events.has_listeners(SESSION_EVENT)
        self._llm: LlmService | None = None
        self._telemetry: Telemetry | None = None
        self._telemetry_known = False
        self.verify_view: VerifyMode = verify_override or options.verify_view

    @staticmethod
    def _last_turn(session: Session) -> int:
        for event in reversed(session.events):
            if event.type == ev.TURN_START:
                return ev.payload(event, ev.TURN_START)["turn"]
        return 0

    @staticmethod
    def _last_context(session: Session) -> dict[str, str]:
        found: dict[str, str] = {}
        for event in reversed(session.events):
            if event.type == ev.USER_MESSAGE:
                message = ev.payload(event, ev.USER_MESSAGE)
                if message.get("source") == "context":
                    found.setdefault(message.get("entry", ""), message["content"])
        return found

    # -- input -------------------------------------------------------------------------------

    def followup(self, message: UserMessage | str) -> None:
        """Queue input for the next turn and wake the agent."""
        self._ensure_open()
        self.inbox.append(UserMessage(message) if isinstance(message, str) else message)
        self._wake()

    def steer(self, message: UserMessage | str) -> None:
        """Insert input into the running turn at the next step (or start a turn when idle)."""
        self._ensure_open()
        msg = UserMessage(message) if isinstance(message, str) else message
        if self.status == "running":
            self.steering.append(msg)
        else:
            self.inbox.append(msg)
            self._wake()

    def cancel(self, cause: CancelCause | None = None, *, keep_inbox: bool = False) -> None:
        """Stop the running turn (it ends with reason `aborted`); queued input is dropped."""
        if not keep_inbox:
            self.inbox.clear()
            self.steering.clear()
        task = self._turn_task
        if task is not None and not task.done():
            # The first cause wins: disposing a session its client closed says "close", not
            # the "disposed" of the teardown that follows.
            if self._cancel_cause is None:
                self._cancel_cause = cause or CancelCause("user")
            task.cancel()

    async def when_idle(self) -> None:
        """Wait until no turn runs and no input is queued."""
        # The runner drains the inbox before it ends; input queued after that starts a new one.
        runner = self._runner
        while runner is not None and not runner.done():
            await asyncio.wait((runner,))
            runner = self._runner

    @property
    def closed(self) -> bool:
        return self._closed

    # -- services used on every step ---------------------------------------------------------
    # Looked up once: the agent's layer is complete when it is created (setup ran first), and
    # the plugins it inherits from outlive it, so the lookups cannot go stale.

    @property
    def llm(self) -> LlmService:
        llm = self._llm
        if llm is None:
            llm = self._llm = self.ctx.get(LLM)
        return llm

    @property
    def telemetry(self) -> Telemetry | None:
        if not self._telemetry_known:
            self._telemetry = self.ctx.maybe(TELEMETRY)
            self._telemetry_known = True
        return self._telemetry

    def _ensure_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"agent {self.id!r} is disposed")

    # -- the runner --------------------------------------------------------------------------

    def _wake(self) -> None:
        if self._runner is None or self._runner.done():
            self._set_status("running")
            self._runner = asyncio.get_running_loop().create_task(
                self._run(), name=f"agent:{self.id}"
            )

    def _set_status(self, status: AgentStatus) -> None:
        if self.status != status:
            self.status = status
            self.ctx.emit(STATUS, StatusChange(self, status))

    async def _run(self) -> None:
        from .turn import run_turn

        try:
            while self.inbox and not self._closed:
                first = self.inbox.pop(0)
                self._cancel_cause = None
                self._publish = self.ctx.events.has_listeners(SESSION_EVENT)
                turn = asyncio.get_running_loop().create_task(run_turn(self, first))
                self._turn_task = turn
                try:
                    await asyncio.shield(turn)
                except asyncio.CancelledError:
                    # Our own runner was cancelled (dispose): stop the turn and wait for it.
                    turn.cancel()
                    await asyncio.gather(turn, return_exceptions=True)
                    raise
                finally:
                    self._turn_task = None
        except asyncio.CancelledError:
            pass
        except Exception:
            _log.exception("agent %s: runner failed", self.id)
        finally:
            self._set_status("idle")

    def take_cancel_cause(self) -> CancelCause:
        cause = self._cancel_cause or CancelCause("user")
        self._cancel_cause = None
        return cause

    # -- logging -----------------------------------------------------------------------------

    def log(self, kind: EventKind[D], data: D) -> SessionEvent:
        """Append to the session log and publish it to live observers; `data` is of the kind's
        TypedDict (pyright checks each field where it is written)."""
        event = self.session.append(kind.name, data)
        if self._publish:
            self.ctx.emit(SESSION_EVENT, LoggedEvent(self, event))
        return event

    # -- lifecycle ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop the loop and wait for it to exit; queued input is dropped."""
        if self._closed:
            return
        self.cancel(CancelCause("disposed"))
        self._closed = True
        runner = self._runner
        if runner is not None and not runner.done():
            turn = self._turn_task
            if turn is not None:
                await asyncio.gather(turn, return_exceptions=True)
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)

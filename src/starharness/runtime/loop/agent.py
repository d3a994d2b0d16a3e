"""An agent: a session, an inbox, and one owned task that runs turns while input is queued.

A turn runs steps until no tool result is owed and no input is queued, then logs `turn/end`; a
step sends one model request, folds its stream into the assistant message, and runs the tool
calls it made. What a step logs is shaped in step.py; view_log.py checks that what is sent is
what the log rebuilds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..errors import StarHarnessError
from ..kernel import Context
from ..llm import LLM
from ..llm.errors import ContextOverflowError, LlmError
from ..llm.types import LlmRequest, Message, StreamChunk, ToolCall, ToolSchema, UserMessage
from ..prompt import PROMPT
from ..session import VIEW_REWRITE
from ..session import event_types as ev
from ..telemetry import TELEMETRY, request_span, turn_span
from ..tools import TOOLS
from .hooks import (
    COMPACT,
    PRE_STEP,
    REQUEST,
    SESSION_EVENT,
    STATUS,
    TURN_STOPPING,
    AgentStatus,
    CompactRequest,
    LoggedEvent,
    OutgoingRequest,
    StatusChange,
    StepPlan,
    TurnStopping,
)
from .options import AgentOptions, VerifyMode
from .step import (
    StepAccumulator,
    StepResult,
    chunk_data,
    message_data,
    request_context_data,
    tool_header,
    tool_result_data,
)
from .view_log import verify_request, view_rewrite

if TYPE_CHECKING:
    from ..llm import LlmService, RetryInfo
    from ..session import EventKind, Session, SessionEvent
    from ..telemetry import Telemetry

_log = logging.getLogger("starharness.runtime.loop")

D = TypeVar("D", bound=Mapping[str, Any])

_NO_TOOLS: tuple[ToolSchema, ...] = ()


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


class TurnLimitError(StarHarnessError):
    """A turn hit its step or time bound."""


class _Vetoed(Exception):
    """A waterfall listener vetoed the step: the turn ends `aborted` with cause `hook`."""

    def __init__(self, hook: str) -> None:
        super().__init__(hook)
        self.hook = hook


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
        try:
            while self.inbox and not self._closed:
                first = self.inbox.pop(0)
                self._cancel_cause = None
                self._publish = self.ctx.events.has_listeners(SESSION_EVENT)
                turn = asyncio.get_running_loop().create_task(self._run_turn(first))
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

    def _take_cancel_cause(self) -> CancelCause:
        cause = self._cancel_cause or CancelCause("user")
        self._cancel_cause = None
        return cause

    # -- a turn ------------------------------------------------------------------------------

    async def _run_turn(self, first: UserMessage) -> None:
        """Run one turn for `first` and log exactly one `turn/start` and one `turn/end`."""
        self.turn += 1
        turn = self.turn
        self.log(ev.TURN_START, ev.TurnStartData(turn=turn))
        # The context before the turn's words: a small model answers what it read last, and a
        # state block logged after a request to buy something turned the request into a sale.
        # The words are logged even when a context cannot be rendered; the turn then ends with
        # that error.
        unrendered: Exception | None = None
        try:
            self._snapshot_context()
        except Exception as exc:
            unrendered = exc
        self._log_user(first)
        end = ev.TurnEndData(turn=turn, reason="completed")
        with turn_span(self.id, turn):
            try:
                if unrendered is not None:
                    raise unrendered
                timeout = self.options.turn_timeout_s
                if timeout is None:
                    end["reason"] = await self._steps(turn)
                else:
                    try:
                        end["reason"] = await asyncio.wait_for(self._steps(turn), timeout)
                    except TimeoutError:
                        raise TurnLimitError(
                            f"turn exceeded its time limit of {timeout:g} s"
                        ) from None
            except asyncio.CancelledError:
                cause = self._take_cancel_cause()
                end = ev.TurnEndData(
                    turn=turn, reason="aborted", cause=cause.kind, detail=cause.reason
                )
            except _Vetoed as vetoed:
                detail = f"a listener of {vetoed.hook} vetoed the step"
                end = ev.TurnEndData(turn=turn, reason="aborted", cause="hook", detail=detail)
            except TurnLimitError as exc:
                end = ev.TurnEndData(turn=turn, reason="error", error=str(exc), kind="limit")
            except LlmError as exc:
                end = ev.TurnEndData(
                    turn=turn, reason="error", error=str(exc), kind=type(exc).__name__
                )
            except Exception as exc:
                _log.exception("agent %s: turn %d failed", self.id, turn)
                error = f"{type(exc).__name__}: {exc}"
                end = ev.TurnEndData(turn=turn, reason="error", error=error, kind="internal")
            finally:
                self.log(ev.TURN_END, end)

    async def _steps(self, turn: int) -> ev.TurnEndReason:
        events = self.ctx.events
        step = 0
        overflowed = False
        while True:
            step += 1
            if step > self.options.max_steps:
                raise TurnLimitError(f"turn exceeded its limit of {self.options.max_steps} steps")
            while self.steering:
                self._log_user(self.steering.pop(0))
            if events.has_listeners(COMPACT):
                await events.bail(COMPACT, CompactRequest(self, turn, step, "pressure"))
            messages = self.session.messages()
            if events.has_listeners(PRE_STEP):
                plan = await events.waterfall(PRE_STEP, StepPlan(self, turn, step, list(messages)))
                if plan is None:
                    raise _Vetoed(PRE_STEP.name)
                # What a listener changed goes into the log before it can reach the model.
                self._log_view_change(turn, step, plan.messages, PRE_STEP.name)
                messages = self.session.messages()
            try:
                result = await self._run_step(turn, step, messages)
            except ContextOverflowError:
                self.log(
                    ev.STEP_END, ev.StepEndData(turn=turn, step=step, error="context-overflow")
                )
                if overflowed or not events.has_listeners(COMPACT):
                    raise
                overflowed = True
                compacted = await events.bail(COMPACT, CompactRequest(self, turn, step, "overflow"))
                if not compacted:
                    raise
                continue
            overflowed = False
            if result is None:
                raise _Vetoed(REQUEST.name)
            concluded = False
            if result.message.tool_calls:
                concluded = await self._run_tool_calls(turn, step, result.message.tool_calls)
            self.log(ev.STEP_END, ev.StepEndData(turn=turn, step=step))
            if self.steering:
                continue
            if result.message.tool_calls and not concluded:
                continue
            if result.finish == "max-tokens" and not result.message.tool_calls:
                return "max-tokens"
            if events.has_listeners(TURN_STOPPING):
                more = await events.bail(
                    TURN_STOPPING, TurnStopping(self, turn, step, result.message.text)
                )
                if isinstance(more, UserMessage):
                    self._log_user(more)
                    continue
            return "completed"

    def _log_user(self, message: UserMessage) -> None:
        self.log(
            ev.USER_MESSAGE, ev.UserMessageData(content=message.content, source=message.source)
        )

    def _snapshot_context(self) -> None:
        """Log the dynamic context once per turn, before the turn's first message: each entry
        whose text changed since it was last logged, as its own message. An entry that changes
        every turn (what the player's words retrieved) then costs a model server that reuses the
        prompt it already evaluated only its own tokens, not the whole scene again."""
        prompt = self.ctx.maybe(PROMPT)
        if prompt is None:
            return
        logged = self.last_context
        for name, text in prompt.render_context_parts(self.ctx):
            if logged.get(name) != text:
                logged[name] = text
                self.log(
                    ev.USER_MESSAGE, ev.UserMessageData(content=text, source="context", entry=name)
                )

    def _log_view_change(self, turn: int, step: int, after: Sequence[Message], by: str) -> bool:
        """Log how `after` differs from the session's view; False when it does not."""
        data = view_rewrite(self.session, after, by=by, turn=turn, step=step)
        if data is None:
            return False
        self.log(VIEW_REWRITE, data)
        return True

    # -- a step: the model request -----------------------------------------------------------

    async def _run_step(
        self, turn: int, step: int, messages: Sequence[Message]
    ) -> StepResult | None:
        """Send one request and fold its stream; None when a request hook vetoed it."""
        ctx = self.ctx
        llm = self.llm
        opts = self.options
        provider = llm.get(opts.provider)
        model = opts.model or provider.default_model
        system, tools = self._static_part()
        request = LlmRequest(
            model=model,
            system=system,
            messages=messages,
            session_id=self.session.id,
            tools=tools,
            tool_choice=opts.tool_choice,
            max_tokens=opts.max_tokens,
            temperature=opts.temperature,
        )
        if ctx.events.has_listeners(REQUEST):
            # A copy: a listener changing the list in place must not change the projection.
            request.messages = list(messages)
            outgoing = await ctx.events.waterfall(
                REQUEST, OutgoingRequest(self, turn, step, request)
            )
            if outgoing is None:
                return None
            request = outgoing.request
            if self._log_view_change(turn, step, request.messages, REQUEST.name):
                request.messages = self.session.messages()
            else:
                request.messages = messages
        self._log_header_if_changed(request.system, request.tools)
        verify_request(self.session, request, self.verify_view)
        context = request_context_data(provider.name, request)
        quirk = llm.quirk(request, provider=provider.name)
        if quirk is not None:
            # The server cannot take the request as asked: the log says what was sent instead.
            context["quirk"] = quirk
        self.log(ev.REQUEST_CONTEXT, context)
        self.log(ev.STEP_START, ev.StepData(turn=turn, step=step))

        acc = StepAccumulator()
        log_chunks = opts.log_chunks
        log = self.log
        holder: list[StepAccumulator] = [acc]

        telemetry = self.telemetry
        if telemetry is not None:
            telemetry.record_request(provider.name, model)

        def on_retry(info: RetryInfo) -> None:
            if telemetry is not None:
                telemetry.record_retry(provider.name, model)
            log(
                ev.LLM_RETRY,
                ev.LlmRetryData(
                    turn=turn,
                    step=step,
                    attempt=info.attempt,
                    delay_s=info.delay_s,
                    error=str(info.error),
                    after_output=info.after_output,
                ),
            )
            # Output of a failed attempt is discarded; observers see the retry event and reset.
            holder[0] = StepAccumulator()

        chunk_type = ev.ASSISTANT_CHUNK
        with request_span(provider.name, model):
            try:
                chunk: StreamChunk
                async for chunk in llm.stream(request, provider=provider.name, on_retry=on_retry):
                    holder[0].add(chunk)
                    if log_chunks:
                        # An annotated literal, not the TypedDict's call: this runs for every chunk.
                        logged: ev.AssistantChunkData = {
                            "turn": turn,
                            "step": step,
                            "chunk": chunk_data(chunk),
                        }
                        log(chunk_type, logged)
            except (asyncio.CancelledError, Exception) as exc:
                if telemetry is not None and not isinstance(exc, asyncio.CancelledError):
                    telemetry.record_error(type(exc).__name__)
                partial = holder[0]
                if partial.text():
                    data = message_data(
                        turn, step, StepResult(partial.message(drop_calls=True), None, "aborted")
                    )
                    data["interrupted"] = True
                    log(ev.ASSISTANT_MESSAGE, data)
                raise
        result = holder[0].result()
        usage = result.usage
        if telemetry is not None and usage is not None:
            telemetry.record_usage(
                provider.name,
                model,
                input_tokens=usage.input,
                output_tokens=usage.output,
                cache_read_tokens=usage.cache_read,
            )
        log(ev.ASSISTANT_MESSAGE, message_data(turn, step, result))
        return result

    def _static_part(self) -> tuple[str, Sequence[ToolSchema]]:
        ctx = self.ctx
        prompt = ctx.maybe(PROMPT)
        tools = ctx.maybe(TOOLS)
        system = prompt.assemble(ctx) if prompt is not None else ""
        return system, (tools.schemas() if tools is not None else _NO_TOOLS)

    def _log_header_if_changed(self, system: str, tools: Sequence[ToolSchema]) -> None:
        last = self.header
        if last is not None and last[0] is system and last[1] is tools:
            return
        if last is not None and last[0] == system and list(last[1]) == list(tools):
            self.header = (system, tools)
            return
        reason = "initial" if last is None and not self.resumed else "change"
        if last is None and self.resumed:
            reason = "resume"
        self.header = (system, tools)
        self.log(
            ev.REQUEST_HEADER,
            ev.RequestHeaderData(
                system=system, tools=[tool_header(t) for t in tools], reason=reason
            ),
        )

    # -- a step: the tool calls --------------------------------------------------------------

    async def _run_tool_calls(self, turn: int, step: int, calls: Sequence[ToolCall]) -> bool:
        """Log the calls, run them through the registry, log the results; True when a tool
        concluded the turn."""
        for call in calls:
            self.log(
                ev.TOOL_CALL,
                ev.ToolCallEventData(
                    turn=turn, step=step, call_id=call.id, name=call.name, arguments=call.arguments
                ),
            )
        registry = self.ctx.maybe(TOOLS)
        if registry is None:
            for call in calls:
                error = f"Error: unknown tool {call.name!r}"
                self.log(
                    ev.TOOL_RESULT, tool_result_data(turn, step, call, error, True, "UNKNOWN_TOOL")
                )
            return False
        done: set[str] = set()
        try:
            outcomes = await registry.execute_calls(calls, self.ctx, session_id=self.session.id)
        except asyncio.CancelledError:
            # Every call needs a result, or the next request would be malformed.
            for call in calls:
                if call.id not in done:
                    self.log(
                        ev.TOOL_RESULT,
                        tool_result_data(turn, step, call, "Error: aborted", True, "ABORTED"),
                    )
            raise
        concluded = False
        for call, outcome in zip(calls, outcomes, strict=True):
            done.add(call.id)
            error = outcome.error_code if outcome.is_error else None
            data = tool_result_data(turn, step, call, outcome.content, outcome.is_error, error)
            if outcome.is_error and outcome.traceback:
                data["traceback"] = outcome.traceback
            self.log(ev.TOOL_RESULT, data)
            concluded = concluded or outcome.concludes_turn
        for outcome in outcomes:
            for text in outcome.deferred:
                self.log(ev.USER_MESSAGE, ev.UserMessageData(content=text, source="tool"))
        return concluded

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

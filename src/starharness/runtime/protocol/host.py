"""The session API for one connection: the four requests against a running runtime.

Transport-free: a transport feeds requests to `call` and writes what `send` is given (encoded
update notifications). Every session a connection opens is disposed when it closes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..approvals import ApprovalRequest, Decision
from ..kernel import Context
from ..llm import LLM, unconfigured
from ..loop import AGENTS, SESSION_EVENT, AgentExistsError, AgentHandle, CancelCause, LoggedEvent
from ..session import SESSIONS, SessionExistsError, SessionNotFoundError
from ..session import event_types as ev
from ..tools import TOOLS
from .approval_answers import NO_ANSWER, decision_for
from .approval_router import ApprovalRouter
from .jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MODEL_UNAVAILABLE,
    NO_SUCH_APPROVAL,
    NOT_INITIALIZED,
    SESSION_BUSY,
    SESSION_EXISTS,
    SESSION_NOT_FOUND,
    SHUTTING_DOWN,
    RpcError,
)
from .models import (
    METHODS,
    PROTOCOL_VERSION,
    SESSION_PARAMS,
    AnswerApproval,
    ApprovalAsked,
    CancelTurn,
    CloseSession,
    CreateSession,
    InitializeParams,
    InitializeResult,
    ListSessions,
    ModelInfo,
    PeerInfo,
    PromptParams,
    PromptResult,
    ResumeSession,
    SessionDone,
    SessionList,
    SessionOpened,
    SessionSummary,
    ShutdownResult,
    WireModel,
)
from .updates import history_of, title_of, update_for, work_of

CHAT_KIND = "chat"
"""`meta.kind` of sessions opened through the protocol; listings show these (and untagged ones)."""

SendUpdate = Callable[[WireModel], None]
"""Takes each update for the client (a transport encodes it as a `session/update`)."""


@dataclass(slots=True)
class _Open:
    handle: AgentHandle
    release: Callable[[], None]
    text: str = ""
    turn: int = 0
    reason: str = "completed"
    error: str | None = None
    cause: str | None = None
    prompting: bool = False
    pending: dict[str, asyncio.Future[Decision]] = field(
        default_factory=dict[str, "asyncio.Future[Decision]"]
    )
    asked: dict[str, ApprovalAsked] = field(default_factory=dict[str, ApprovalAsked])


@dataclass(frozen=True, slots=True)
class HostInfo:
    """What `initialize` reports about the server."""

    profile: str
    name: str = "star-harness"
    version: str = ""
    session_prefix: str = "rpc"


class SessionHost:
    """One connection's sessions. `shutdown_requested` is set by the `shutdown` request."""

    def __init__(
        self, ctx: Context, router: ApprovalRouter, info: HostInfo, send: SendUpdate
    ) -> None:
        self._ctx = ctx
        self._router = router
        self._info = info
        self._send = send
        self._open: dict[str, _Open] = {}
        # Sessions being closed: their turn's end still reaches the prompt waiting for it.
        self._closing_sessions: dict[str, _Open] = {}
        self._initialized = False
        self._closing = False
        self.shutdown_requested = asyncio.Event()

    # -- dispatch ----------------------------------------------------------------------------

    async def call(self, method: str, params: dict[str, Any]) -> str:
        """Run one request; the encoded result, or RpcError."""
        result = await self.call_model(method, params)
        return result.model_dump_json(by_alias=True, exclude_none=True)

    async def call_model(self, method: str, params: dict[str, Any] | BaseModel) -> BaseModel:
        """Run one request (params as wire JSON or a model); the result model, or RpcError."""
        spec = METHODS.get(method)
        if spec is None:
            names = ", ".join(METHODS)
            raise RpcError(METHOD_NOT_FOUND, f"unknown method {method!r}; the methods: {names}")
        if self._closing or self.shutdown_requested.is_set():
            raise RpcError(SHUTTING_DOWN, "the server is shutting down")
        if method == "shutdown" and self._initialized:
            # At once, so a request read after this one is refused, not run.
            self.shutdown_requested.set()
        parsed = params if isinstance(params, BaseModel) else _validate(method, spec[0], params)
        if method == "initialize":
            assert isinstance(parsed, InitializeParams)
            return self._initialize(parsed)
        if not self._initialized:
            raise RpcError(NOT_INITIALIZED, f"send initialize before {method}")
        if method == "session":
            result: BaseModel = await self._session(parsed)
        elif method == "prompt":
            assert isinstance(parsed, PromptParams)
            result = await self._prompt(parsed)
        else:
            result = ShutdownResult()
        return result

    def _initialize(self, params: InitializeParams) -> InitializeResult:
        if params.protocol_version != PROTOCOL_VERSION:
            raise RpcError(
                INVALID_PARAMS,
                f"protocol version {params.protocol_version} is not spoken here; "
                f"this server speaks {PROTOCOL_VERSION}",
            )
        self._initialized = True
        registry = self._ctx.maybe(TOOLS)
        tools = registry.names() if registry is not None else []
        return InitializeResult(
            protocol_version=PROTOCOL_VERSION,
            server=PeerInfo(name=self._info.name, version=self._info.version),
            profile=self._info.profile,
            tools=sorted(tools),
            approvals=self._router.interactive,
            model=self._model_info(),
        )

    def _model_info(self) -> ModelInfo | None:
        service = self._ctx.maybe(LLM)
        if service is None or service.default_name is None:
            return None
        placeholder = unconfigured(service)
        if placeholder is not None:
            return ModelInfo(
                ready=False, problem=placeholder.problem, variable=placeholder.variable
            )
        provider = service.get()
        return ModelInfo(ready=True, provider=provider.name, model=provider.default_model)

    async def _session(self, params: object) -> BaseModel:
        if isinstance(params, CreateSession):
            return await self._create(params)
        if isinstance(params, ResumeSession):
            return await self._resume(params)
        if isinstance(params, ListSessions):
            return await self._list(params)
        if isinstance(params, AnswerApproval):
            return self._answer(params)
        if isinstance(params, CancelTurn):
            self._get(params.session_id).handle.agent.cancel(CancelCause("user", "cancelled"))
            return SessionDone(action="cancel", session_id=params.session_id)
        assert isinstance(params, CloseSession)
        await self._close(self._get(params.session_id), params.session_id, "close")
        return SessionDone(action="close", session_id=params.session_id)

    # -- sessions ----------------------------------------------------------------------------

    async def _create(self, params: CreateSession) -> SessionOpened:
        session_id = params.session_id or f"{self._info.session_prefix}-{uuid.uuid4().hex[:12]}"
        try:
            handle = await self._ctx.get(AGENTS).create(
                session_id,
                setup=lambda layer: self._watch(layer, session_id),
                meta={"kind": CHAT_KIND, "profile": self._info.profile},
            )
        except (AgentExistsError, SessionExistsError) as error:
            raise RpcError(SESSION_EXISTS, f"{error}") from None
        self._adopt(session_id, handle)
        return SessionOpened(action="create", session_id=session_id)

    async def _resume(self, params: ResumeSession) -> SessionOpened:
        session_id = params.session_id
        current = self._open.get(session_id)
        if current is None:
            try:
                handle = await self._ctx.get(AGENTS).resume(
                    session_id, setup=lambda layer: self._watch(layer, session_id)
                )
            except SessionNotFoundError as error:
                raise RpcError(SESSION_NOT_FOUND, f"{error}") from None
            except AgentExistsError:
                raise RpcError(
                    SESSION_BUSY, f"session {session_id!r} is open in another connection"
                ) from None
            current = self._adopt(session_id, handle)
        events = current.handle.agent.session.events
        plan, jobs = work_of(session_id, events)
        return SessionOpened(
            action="resume",
            session_id=session_id,
            history=history_of(events),
            pending_approvals=list(current.asked.values()),
            plan=plan,
            jobs=jobs,
        )

    async def _list(self, params: ListSessions) -> SessionList:
        sessions = self._ctx.get(SESSIONS)
        summaries: list[SessionSummary] = []
        for info in await sessions.stored():
            kind = info.meta.get("kind")
            if kind is not None and kind != CHAT_KIND:
                continue
            live = sessions.get(info.id)
            if live is not None:
                title = title_of(live.events)
            else:
                stored = await sessions.store.load(info.id)
                title = title_of(stored.events) if stored is not None else ""
            summaries.append(
                SessionSummary(
                    session_id=info.id,
                    created_at=info.created_at,
                    updated_at=info.updated_at,
                    title=title,
                    live=info.id in self._open,
                )
            )
            if len(summaries) >= params.limit:
                break
        return SessionList(sessions=summaries)

    def _adopt(self, session_id: str, handle: AgentHandle) -> _Open:
        opened = _Open(handle, lambda: None)
        self._open[session_id] = opened
        opened.release = self._router.own(session_id, lambda request: self._ask(opened, request))
        return opened

    def _get(self, session_id: str) -> _Open:
        opened = self._open.get(session_id)
        if opened is None:
            raise RpcError(
                SESSION_NOT_FOUND,
                f"session {session_id!r} is not open on this connection; create or resume it",
            )
        return opened

    async def _close(self, opened: _Open, session_id: str, why: str) -> None:
        """Dispose the session; a turn it runs ends `aborted` with cause `why`."""
        self._open.pop(session_id, None)
        self._closing_sessions[session_id] = opened
        opened.handle.agent.cancel(CancelCause("disposed", why))
        opened.release()
        for future in opened.pending.values():
            if not future.done():
                future.set_result(NO_ANSWER)
        try:
            await opened.handle.dispose()
        finally:
            self._closing_sessions.pop(session_id, None)

    # -- prompts -----------------------------------------------------------------------------

    async def _prompt(self, params: PromptParams) -> PromptResult:
        opened = self._get(params.session_id)
        agent = opened.handle.agent
        placeholder = unconfigured(self._ctx.maybe(LLM))
        if placeholder is not None:
            raise RpcError(
                MODEL_UNAVAILABLE, placeholder.problem, {"variable": placeholder.variable}
            )
        if opened.prompting or agent.status == "running":
            raise RpcError(
                SESSION_BUSY, f"session {params.session_id!r} is running a turn; wait for it"
            )
        opened.prompting = True
        opened.text, opened.error, opened.reason, opened.cause = "", None, "completed", None
        try:
            agent.followup(params.text)
            await agent.when_idle()
        finally:
            opened.prompting = False
        return PromptResult.model_validate(
            {
                "session_id": params.session_id,
                "turn": opened.turn,
                "reason": opened.reason,
                "text": opened.text,
                "error": opened.error,
                "cause": opened.cause,
            }
        )

    def _watch(self, layer: Context, session_id: str) -> None:
        layer.on(SESSION_EVENT, lambda logged: self._observe(session_id, logged))

    def _observe(self, session_id: str, logged: LoggedEvent) -> None:
        event = logged.event
        opened = self._open.get(session_id) or self._closing_sessions.get(session_id)
        if opened is not None:
            kind = event.type
            if kind == ev.ASSISTANT_MESSAGE:
                opened.text = ev.payload(event, ev.ASSISTANT_MESSAGE)["text"]
            elif kind == ev.TURN_END:
                end = ev.payload(event, ev.TURN_END)
                opened.turn = end["turn"]
                opened.reason = end["reason"]
                opened.error = end.get("error")
                opened.cause = end.get("detail") or end.get("cause")
        update = update_for(session_id, event)
        if update is None:
            return
        # Kept for a client that resumes the session; a closing one is never resumed.
        if isinstance(update, ApprovalAsked) and (live := self._open.get(session_id)) is not None:
            live.asked[update.call_id] = update
        self._send(update)

    # -- approvals ---------------------------------------------------------------------------

    async def _ask(self, opened: _Open, request: ApprovalRequest) -> Decision:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        opened.pending[request.call_id] = future
        try:
            return await future
        finally:
            opened.pending.pop(request.call_id, None)
            opened.asked.pop(request.call_id, None)

    def _answer(self, params: AnswerApproval) -> SessionDone:
        opened = self._get(params.session_id)
        future = opened.pending.get(params.call_id)
        if future is None or future.done():
            raise RpcError(
                NO_SUCH_APPROVAL,
                f"no approval question for call {params.call_id!r} is waiting in session "
                f"{params.session_id!r}",
            )
        future.set_result(decision_for(params.answer))
        return SessionDone(action="answer", session_id=params.session_id)

    # -- lifecycle ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Dispose every session this connection opened (waiting questions are rejected); a
        running turn ends `aborted` with cause `shutdown`, or `disconnect` when the client
        left without one."""
        self._closing = True
        why = "shutdown" if self.shutdown_requested.is_set() else "disconnect"
        for session_id, opened in list(self._open.items()):
            await self._close(opened, session_id, why)


def _validate(method: str, spec: type[BaseModel] | TypeAdapter[Any], params: dict[str, Any]) -> Any:
    try:
        if isinstance(spec, TypeAdapter):
            return spec.validate_python(params)
        return spec.model_validate(params)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'params'}: {problem['msg']}"
            for problem in error.errors(include_url=False)
        )
        raise RpcError(INVALID_PARAMS, f"{method}: invalid params: {problems}") from None


__all__ = ["CHAT_KIND", "SESSION_PARAMS", "HostInfo", "SendUpdate", "SessionHost"]

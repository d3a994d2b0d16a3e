"""The session protocol's messages: four requests, their results, and the streamed updates.

One source for every transport (`rpc` over stdio, the web UI over WebSocket, the SDK); the JSON
Schema in docs/session-protocol.schema.json is generated from these models. Field names are
camelCase on the wire, snake_case in Python.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION: Final = 1
UPDATE_METHOD: Final = "session/update"
"""The one notification method the server sends; `params.kind` says what happened."""


class WireModel(BaseModel):
    """camelCase on the wire, unknown fields ignored (newer peers may send more)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=True,
        use_attribute_docstrings=True,
    )


# -- initialize ------------------------------------------------------------------------------


class PeerInfo(WireModel):
    name: str
    version: str = ""


class InitializeParams(WireModel):
    """The first request: which protocol the client speaks."""

    protocol_version: int = PROTOCOL_VERSION
    client: PeerInfo | None = None


class ModelInfo(WireModel):
    """Whether `prompt` can reach a model; the server starts and answers without one."""

    ready: bool
    provider: str | None = None
    model: str | None = None
    problem: str | None = None
    """When not ready: what is missing and how to fix it (the variable or flag to set)."""
    variable: str | None = None
    """When not ready for want of a key: the environment variable that would hold it."""


class InitializeResult(WireModel):
    protocol_version: int
    server: PeerInfo
    profile: str
    tools: list[str]
    """Tool names the profile registers (the model may call them)."""
    approvals: bool
    """True when approval questions are sent to this client (an interactive profile)."""
    model: ModelInfo | None = None
    """The profile's model (absent when the profile has none); `prompt` fails with -32007 while
    `ready` is false."""


# -- session ---------------------------------------------------------------------------------

ApprovalAnswer = Literal["allow_once", "reject", "cancel"]
"""What a client may answer to `approval.asked`."""


class CreateSession(WireModel):
    action: Literal["create"] = "create"
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    """Default: a fresh id chosen by the server."""


class ResumeSession(WireModel):
    action: Literal["resume"] = "resume"
    session_id: str = Field(min_length=1, max_length=200)


class ListSessions(WireModel):
    action: Literal["list"] = "list"
    limit: int = Field(default=100, ge=1, le=10_000)


class AnswerApproval(WireModel):
    action: Literal["answer"] = "answer"
    session_id: str
    call_id: str
    answer: ApprovalAnswer


class CancelTurn(WireModel):
    action: Literal["cancel"] = "cancel"
    session_id: str


class CloseSession(WireModel):
    action: Literal["close"] = "close"
    session_id: str


SessionParams = Annotated[
    CreateSession | ResumeSession | ListSessions | AnswerApproval | CancelTurn | CloseSession,
    Field(discriminator="action"),
]
"""`session` manages sessions; `action` picks what it does."""


class HistoryItem(WireModel):
    """One visible entry of a session's past: what a resumed client shows."""

    role: Literal["user", "assistant", "tool"]
    text: str
    tool: str | None = None
    call_id: str | None = None
    arguments: str | None = None
    is_error: bool | None = None


class SessionSummary(WireModel):
    session_id: str
    created_at: int
    updated_at: int
    title: str = ""
    live: bool = False


class SessionOpened(WireModel):
    """The answer to create and resume."""

    action: Literal["create", "resume"]
    session_id: str
    history: list[HistoryItem] = []
    pending_approvals: list[ApprovalAsked] = []
    plan: PlanUpdated | None = None
    """The session's current plan, when it has one (as the last `plan.update` said it)."""
    jobs: list[JobUpdated] = []
    """Each background job the session started, in its latest state."""


class SessionList(WireModel):
    action: Literal["list"] = "list"
    sessions: list[SessionSummary]


class SessionDone(WireModel):
    """The answer to answer, cancel and close."""

    action: Literal["answer", "cancel", "close"]
    session_id: str


SessionResult = SessionOpened | SessionList | SessionDone


# -- prompt ----------------------------------------------------------------------------------


class PromptParams(WireModel):
    """One turn: the answer comes when the turn ends; updates stream meanwhile."""

    session_id: str
    text: str = Field(min_length=1)


TurnEndReason = Literal["completed", "aborted", "error", "max-tokens", "interrupted"]


class PromptResult(WireModel):
    session_id: str
    turn: int
    reason: TurnEndReason
    text: str
    """The assistant's final text of the turn (the last step's)."""
    error: str | None = None
    cause: str | None = None
    """Why an `aborted` turn ended: `user` (cancel), `close` (the session was closed),
    `shutdown`, `disconnect`, ... as the turn's log records it."""


# -- shutdown --------------------------------------------------------------------------------


class ShutdownParams(WireModel):
    pass


class ShutdownResult(WireModel):
    pass


# -- updates (server -> client notifications) ------------------------------------------------


class TurnStarted(WireModel):
    kind: Literal["turn.start"] = "turn.start"
    session_id: str
    turn: int


class TextDelta(WireModel):
    kind: Literal["text.delta"] = "text.delta"
    session_id: str
    turn: int
    text: str


class ReasoningDelta(WireModel):
    kind: Literal["reasoning.delta"] = "reasoning.delta"
    session_id: str
    turn: int
    text: str


class ToolCalled(WireModel):
    kind: Literal["tool.call"] = "tool.call"
    session_id: str
    turn: int
    call_id: str
    name: str
    arguments: str
    """The raw JSON arguments, as the model sent them."""


class ToolResulted(WireModel):
    kind: Literal["tool.result"] = "tool.result"
    session_id: str
    turn: int
    call_id: str
    name: str
    content: str
    is_error: bool


class ApprovalAsked(WireModel):
    """A call waits for `session {action: answer}` naming its call id."""

    kind: Literal["approval.asked"] = "approval.asked"
    session_id: str
    call_id: str
    tool: str
    arguments: str
    reason: str = ""


class ApprovalDecided(WireModel):
    kind: Literal["approval.decided"] = "approval.decided"
    session_id: str
    call_id: str
    tool: str
    decision: str
    """The runtime's outcome name (allowed once, rejected, ...; docs/session-protocol.md)."""
    message: str = ""


class PlanStep(WireModel):
    id: str
    text: str
    status: Literal["pending", "in_progress", "done"]


class PlanUpdated(WireModel):
    """The whole plan, each time it changes (the agent's `todo_write`)."""

    kind: Literal["plan.update"] = "plan.update"
    session_id: str
    revision: int
    items: list[PlanStep]


JobState = Literal["running", "exited", "stopped"]


class JobUpdated(WireModel):
    """A background job started, was read, exited or was stopped."""

    kind: Literal["job.update"] = "job.update"
    session_id: str
    job_id: str
    command: str
    state: JobState
    exit_code: int | None = None
    tail: str = ""
    """Its latest output (the last 2000 bytes at most), as of this update."""


class TurnEnded(WireModel):
    kind: Literal["turn.end"] = "turn.end"
    session_id: str
    turn: int
    reason: TurnEndReason
    error: str | None = None


SessionUpdate = Annotated[
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | ToolCalled
    | ToolResulted
    | ApprovalAsked
    | ApprovalDecided
    | PlanUpdated
    | JobUpdated
    | TurnEnded,
    Field(discriminator="kind"),
]

UPDATE_ADAPTER: TypeAdapter[SessionUpdate] = TypeAdapter(SessionUpdate)
SESSION_PARAMS: TypeAdapter[SessionParams] = TypeAdapter(SessionParams)

METHODS: Final[dict[str, tuple[type[BaseModel] | TypeAdapter[Any], Any]]] = {
    "initialize": (InitializeParams, InitializeResult),
    "session": (SESSION_PARAMS, SessionResult),
    "prompt": (PromptParams, PromptResult),
    "shutdown": (ShutdownParams, ShutdownResult),
}
"""The four requests: params model and result type. There are no others."""

SessionOpened.model_rebuild()

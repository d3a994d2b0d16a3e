"""Names of the session event types and the typed shape of each one's data.

Only user/message, assistant/message, tool/result and view/rewrite (session/view.py) are
model-visible; the rest are kept for replay, observers and recovery. Read an event's data
through its payload type: `data = payload(event, TurnEndData)`. Logged data is frozen: its
arrays are tuples, its mappings FrozenDicts.
"""

# No `from __future__ import annotations`: TypedDict reads NotRequired from real annotations.

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict, TypeVar, cast

from .view import VIEW_REWRITE, ViewRewriteData

if TYPE_CHECKING:
    from .events import SessionEvent

TurnEndReason = Literal["completed", "aborted", "error", "max-tokens", "interrupted"]
HeaderReason = Literal["initial", "change", "resume"]
ChunkType = Literal["text-delta", "reasoning-delta", "tool-call-delta", "usage", "finish"]
"""`ChunkData.type`: the `type` of the StreamChunk it was made from."""

TEXT_DELTA: Final = "text-delta"
TOOL_CALL_DELTA: Final = "tool-call-delta"

INTERRUPTED: Final = "interrupted"
"""turn/end reason written on resume for a turn that a crash cut short."""


class TurnStartData(TypedDict):
    turn: int


class TurnEndData(TypedDict):
    """`error` and `kind` (limit, internal or the LlmError's class) when reason is "error";
    `cause` (who cancelled: user, parent, disposed, hook, timeout) and `detail` when it is
    "aborted"."""

    turn: int
    reason: TurnEndReason
    error: NotRequired[str]
    kind: NotRequired[str]
    cause: NotRequired[str]
    detail: NotRequired[str]


class StepData(TypedDict):
    """step/start and step/end."""

    turn: int
    step: int


class UserMessageData(TypedDict):
    """`source` is "user" when missing; "context" marks the prompt's dynamic context."""

    content: str
    source: NotRequired[str]


class UsageData(TypedDict):
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int


class ChunkData(TypedDict):
    """One streamed chunk: `type` is the StreamChunk's, the other fields are its own."""

    type: ChunkType
    text: NotRequired[str]
    index: NotRequired[int]
    id: NotRequired[str | None]
    name: NotRequired[str | None]
    arguments_delta: NotRequired[str]
    reason: NotRequired[str]
    input: NotRequired[int]
    output: NotRequired[int]
    cache_read: NotRequired[int]
    cache_write: NotRequired[int]
    reasoning: NotRequired[int]


class AssistantChunkData(TypedDict):
    turn: int
    step: int
    chunk: ChunkData


class ToolCallData(TypedDict):
    """An assistant message's call, and the tool/call event (with turn and step)."""

    id: str
    name: str
    arguments: str


class AssistantMessageData(TypedDict):
    turn: int
    step: int
    text: str
    reasoning: NotRequired[str]
    tool_calls: Sequence[ToolCallData]
    usage: NotRequired[UsageData]
    finish: str
    interrupted: NotRequired[bool]


class ToolCallEventData(TypedDict):
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str


class ToolErrorData(TypedDict):
    code: str
    message: NotRequired[str]


class ToolResultData(TypedDict):
    turn: int
    step: int
    call_id: str
    name: str
    content: str
    is_error: bool
    error: NotRequired[ToolErrorData]
    traceback: NotRequired[str]


class ToolHeader(TypedDict):
    name: str
    description: str
    parameters: Mapping[str, Any]


class RequestHeaderData(TypedDict):
    system: str
    tools: Sequence[ToolHeader]
    reason: HeaderReason


class QuirkData(TypedDict):
    choice: str
    reason: str
    tool: NotRequired[str]


class RequestContextData(TypedDict):
    """Marks one request sent to the model; `quirk` says how a provider quirk changed it."""

    provider: str
    model: str | None
    max_tokens: int | None
    temperature: float | None
    tool_choice: str | dict[str, str]
    quirk: NotRequired[QuirkData]


class LlmRetryData(TypedDict):
    attempt: int
    delay_s: float
    error: str
    after_output: bool


class ApprovalAskedData(TypedDict):
    call_id: str
    tool: str
    arguments: Any
    reason: str | None


class ApprovalDecidedData(TypedDict):
    call_id: str
    tool: str
    decision: str
    message: str | None


TURN_START: Final = "turn/start"
TURN_END: Final = "turn/end"
STEP_START: Final = "step/start"
STEP_END: Final = "step/end"
USER_MESSAGE: Final = "user/message"
"""Model-visible, whatever the source (including "context")."""
ASSISTANT_CHUNK: Final = "assistant/chunk"
ASSISTANT_MESSAGE: Final = "assistant/message"
TOOL_CALL: Final = "tool/call"
TOOL_RESULT: Final = "tool/result"
REQUEST_HEADER: Final = "request/header"
REQUEST_CONTEXT: Final = "request/context"
LLM_RETRY: Final = "llm/retry"
APPROVAL_ASKED: Final = "approval/asked"
APPROVAL_DECIDED: Final = "approval/decided"

PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {
    TURN_START: TurnStartData,
    TURN_END: TurnEndData,
    STEP_START: StepData,
    STEP_END: StepData,
    USER_MESSAGE: UserMessageData,
    ASSISTANT_CHUNK: AssistantChunkData,
    ASSISTANT_MESSAGE: AssistantMessageData,
    TOOL_CALL: ToolCallEventData,
    TOOL_RESULT: ToolResultData,
    REQUEST_HEADER: RequestHeaderData,
    REQUEST_CONTEXT: RequestContextData,
    LLM_RETRY: LlmRetryData,
    APPROVAL_ASKED: ApprovalAskedData,
    APPROVAL_DECIDED: ApprovalDecidedData,
    VIEW_REWRITE: ViewRewriteData,
}
"""Each runtime session event type and the TypedDict of its data (the docs are made from it)."""

D = TypeVar("D", bound=Mapping[str, Any])


def payload(event: "SessionEvent", shape: type[D]) -> D:
    """`event.data` read as `shape` (a TypedDict from PAYLOADS); no copy, no check."""
    return cast(D, event.data)

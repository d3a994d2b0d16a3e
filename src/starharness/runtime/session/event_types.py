"""The runtime's session event types, each an EventKind tied to the TypedDict of its data.

Only user/message, assistant/message, tool/result and view/rewrite (session/view.py) are
model-visible; the rest are kept for replay, observers and recovery. Write an event with its
kind and typed data: `agent.log(TURN_END, TurnEndData(turn=1, reason="completed"))`; read it
through its kind: `data = payload(event, TURN_END)`. Logged data is frozen: its arrays are
tuples, its mappings FrozenDicts.
"""

# No `from __future__ import annotations`: TypedDict reads NotRequired from real annotations.
# TypedDict from typing_extensions: pydantic checks stored data against these, and needs it
# before Python 3.12.

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NotRequired

from typing_extensions import TypedDict

from ..llm.quirks import QuirkData
from .kinds import EventKind, payload
from .view import VIEW_REWRITE, Surface, ViewRewriteData

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
    turn: int
    step: int


class StepEndData(StepData):
    """`error` is "context-overflow" when the step's request did not fit the model's window."""

    error: NotRequired[str]


class UserMessageData(TypedDict):
    """`source` is "user" when missing; "context" marks the prompt's dynamic context, and
    `entry` names the context entry it holds (missing in logs written before entries were
    logged apart: the whole context joined). A compaction summary names its `compaction` and
    the span it replaces (`surface`)."""

    content: str
    source: NotRequired[str]
    entry: NotRequired[str]
    surface: NotRequired[Surface]
    compaction: NotRequired[str]


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


class RequestContextData(TypedDict):
    """Marks one request sent to the model; `quirk` says how a provider quirk changed it."""

    provider: str
    model: str | None
    max_tokens: int | None
    temperature: float | None
    tool_choice: str | dict[str, str]
    quirk: NotRequired[QuirkData]


class LlmRetryData(TypedDict):
    turn: int
    step: int
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


TURN_START: Final = EventKind("turn/start", TurnStartData)
TURN_END: Final = EventKind("turn/end", TurnEndData)
STEP_START: Final = EventKind("step/start", StepData)
STEP_END: Final = EventKind("step/end", StepEndData)
USER_MESSAGE: Final = EventKind("user/message", UserMessageData)
"""Model-visible, whatever the source (including "context")."""
ASSISTANT_CHUNK: Final = EventKind("assistant/chunk", AssistantChunkData)
ASSISTANT_MESSAGE: Final = EventKind("assistant/message", AssistantMessageData)
TOOL_CALL: Final = EventKind("tool/call", ToolCallEventData)
TOOL_RESULT: Final = EventKind("tool/result", ToolResultData)
REQUEST_HEADER: Final = EventKind("request/header", RequestHeaderData)
REQUEST_CONTEXT: Final = EventKind("request/context", RequestContextData)
LLM_RETRY: Final = EventKind("llm/retry", LlmRetryData)
APPROVAL_ASKED: Final = EventKind("approval/asked", ApprovalAskedData)
APPROVAL_DECIDED: Final = EventKind("approval/decided", ApprovalDecidedData)

KINDS: Final[tuple[EventKind[Any], ...]] = (
    TURN_START,
    TURN_END,
    STEP_START,
    STEP_END,
    USER_MESSAGE,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    TOOL_CALL,
    TOOL_RESULT,
    REQUEST_HEADER,
    REQUEST_CONTEXT,
    LLM_RETRY,
    APPROVAL_ASKED,
    APPROVAL_DECIDED,
    VIEW_REWRITE,
)
"""Each runtime session event type (the docs are made from it)."""

PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {kind: kind.shape for kind in KINDS}
"""Each runtime session event type and the TypedDict of its data."""

__all__ = [
    "APPROVAL_ASKED",
    "APPROVAL_DECIDED",
    "ASSISTANT_CHUNK",
    "ASSISTANT_MESSAGE",
    "INTERRUPTED",
    "KINDS",
    "LLM_RETRY",
    "PAYLOADS",
    "REQUEST_CONTEXT",
    "REQUEST_HEADER",
    "STEP_END",
    "STEP_START",
    "TEXT_DELTA",
    "TOOL_CALL",
    "TOOL_CALL_DELTA",
    "TOOL_RESULT",
    "TURN_END",
    "TURN_START",
    "USER_MESSAGE",
    "VIEW_REWRITE",
    "ApprovalAskedData",
    "ApprovalDecidedData",
    "AssistantChunkData",
    "AssistantMessageData",
    "ChunkData",
    "ChunkType",
    "EventKind",
    "HeaderReason",
    "LlmRetryData",
    "QuirkData",
    "RequestContextData",
    "RequestHeaderData",
    "StepData",
    "StepEndData",
    "ToolCallData",
    "ToolCallEventData",
    "ToolErrorData",
    "ToolHeader",
    "ToolResultData",
    "TurnEndData",
    "TurnEndReason",
    "TurnStartData",
    "UsageData",
    "UserMessageData",
    "ViewRewriteData",
    "payload",
]

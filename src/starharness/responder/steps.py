"""Script steps: one typed model per behaviour, discriminated by `behaviour`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveInt,
    TypeAdapter,
    field_validator,
)


class _StepBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StreamShape(_StepBase):
    """Shape of a streamed body: how it is cut, paced and terminated."""

    chunk_size: PositiveInt = Field(default=8, description="Code points of text per SSE event.")
    delay_ms: NonNegativeFloat = Field(default=0, description="Pause between writes.")
    initial_delay_ms: NonNegativeFloat = Field(
        default=0, description="Pause before the status line."
    )
    transport_chunk_bytes: PositiveInt | None = Field(
        default=None,
        description=(
            "Cut the encoded SSE byte stream into writes of this many bytes, so events and "
            "multi-byte characters straddle network reads (seen by clients when delay_ms > 0)."
        ),
    )
    send_done: bool = Field(default=True, description="End the stream with `data: [DONE]`.")


class Success(StreamShape):
    """A text answer, finish reason `stop`."""

    behaviour: Literal["success"] = "success"
    text: str = "mock response"


class SlowSuccess(StreamShape):
    """A text answer that takes its time before and between events."""

    behaviour: Literal["slow_success"] = "slow_success"
    text: str = "mock slow response"
    delay_ms: NonNegativeFloat = 50
    initial_delay_ms: NonNegativeFloat = 200


class MaxTokens(StreamShape):
    """A text answer cut off by the token limit, finish reason `length`."""

    behaviour: Literal["max_tokens"] = "max_tokens"
    text: str = "mock response cut off at the token li"


class ReasoningSuccess(StreamShape):
    """DeepSeek-style `reasoning_content` first, then the text answer."""

    behaviour: Literal["reasoning_success"] = "reasoning_success"
    reasoning: str = "mock reasoning"
    text: str = "mock response"


class ScriptedCall(_StepBase):
    """One tool call; `arguments` is sent verbatim (in a script file a mapping is JSON-encoded)."""

    name: str = Field(min_length=1)
    arguments: str = "{}"
    id: str | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _encode_structured_arguments(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)


def _default_calls() -> tuple[ScriptedCall, ...]:
    return (ScriptedCall(name="mock_tool", arguments='{"value":"mock"}'),)


class ToolCalls(StreamShape):
    """One or several tool calls, arguments streamed in fragments; optional text first."""

    behaviour: Literal["tool_call_success"] = "tool_call_success"
    calls: Sequence[ScriptedCall] = Field(default_factory=_default_calls, min_length=1)
    fragment_size: PositiveInt = Field(
        default=8,
        description="Code points of argument text per event; splits escapes and characters.",
    )
    fragment_splits: Sequence[int] | None = Field(
        default=None, description="Explicit code-point offsets to cut every call's arguments at."
    )
    text: str | None = None
    reasoning: str | None = None


class Stall(_StepBase):
    """Stop answering at `phase`; after `duration_ms` (or never) close the connection."""

    behaviour: Literal["stall"] = "stall"
    phase: Literal["before_headers", "after_headers", "mid_stream"] = "before_headers"
    partial_text: str = "mock partial"
    chunk_size: PositiveInt = 8
    duration_ms: NonNegativeFloat | None = None


class ConnectionReset(_StepBase):
    """Read the request, then reset the TCP connection without a response."""

    behaviour: Literal["connection_reset"] = "connection_reset"


class StreamDisconnect(StreamShape):
    """Start the answer, then drop the connection before it is complete."""

    behaviour: Literal["stream_disconnect"] = "stream_disconnect"
    partial_text: str = "mock partial answer"
    reset: bool = Field(default=False, description="Send a TCP reset instead of a clean close.")


class EmptyBody(_StepBase):
    """Status 200 with an empty body."""

    behaviour: Literal["empty_body"] = "empty_body"
    status: int = Field(default=200, ge=100, le=599)
    content_type: str | None = Field(
        default=None,
        description="Defaults to text/event-stream when streaming, else application/json.",
    )


class MalformedJson(StreamShape):
    """A payload that is not JSON: as an SSE event, or as the whole non-streamed body."""

    behaviour: Literal["malformed_json"] = "malformed_json"
    partial_text: str = ""
    payload: str = '{"id": "chatcmpl-mock-broken", "choices": [{"delta": {"content": "trunc'


class MalformedEvent(StreamShape):
    """An event that is not a valid completion chunk."""

    behaviour: Literal["malformed_event"] = "malformed_event"
    kind: Literal["wrong_shape", "invalid_utf8", "garbage_line"] = "wrong_shape"
    partial_text: str = ""


class WrongContentType(_StepBase):
    """Status 200 with a body that is not an API response (an HTML page by default)."""

    behaviour: Literal["wrong_content_type"] = "wrong_content_type"
    status: int = Field(default=200, ge=100, le=599)
    content_type: str = "text/html; charset=utf-8"
    body: str = "<html><body><h1>mock: this is not an API response</h1></body></html>"


class RateLimit(_StepBase):
    """429 with Retry-After."""

    behaviour: Literal["rate_limit"] = "rate_limit"
    retry_after_s: NonNegativeFloat | None = 1.0
    message: str = "Rate limit reached for requests (mock). Please try again later."


class ServerFault(_StepBase):
    """A 5xx answer with the OpenAI error shape."""

    behaviour: Literal["server_error"] = "server_error"
    status: int = Field(default=500, ge=500, le=599)
    message: str = "The server had an error while processing your request (mock)."


class ServiceUnavailable(_StepBase):
    """503, optionally with Retry-After."""

    behaviour: Literal["service_unavailable"] = "service_unavailable"
    retry_after_s: NonNegativeFloat | None = None
    message: str = "The server is overloaded or not ready yet (mock)."


class BadApiKey(_StepBase):
    """401 invalid_api_key."""

    behaviour: Literal["auth_error"] = "auth_error"
    message: str = "Incorrect API key provided (mock)."


class InvalidRequest(_StepBase):
    """400 invalid_request_error."""

    behaviour: Literal["invalid_request"] = "invalid_request"
    message: str = "Invalid request (mock)."
    param: str | None = None
    code: str | None = None


class ContextOverflow(_StepBase):
    """400 with the provider context-length error shape, code `context_length_exceeded`."""

    behaviour: Literal["context_overflow"] = "context_overflow"
    max_context_tokens: PositiveInt = 65536


class QuotaExceeded(_StepBase):
    """429 insufficient_quota (DeepSeek answers 402 for an empty balance: set `status`)."""

    behaviour: Literal["quota_exceeded"] = "quota_exceeded"
    status: int = Field(default=429, ge=400, le=499)
    message: str = (
        "You exceeded your current quota, please check your plan and billing details (mock)."
    )


Step = Annotated[
    Success
    | SlowSuccess
    | MaxTokens
    | ReasoningSuccess
    | ToolCalls
    | Stall
    | ConnectionReset
    | StreamDisconnect
    | EmptyBody
    | MalformedJson
    | MalformedEvent
    | WrongContentType
    | RateLimit
    | ServerFault
    | ServiceUnavailable
    | BadApiKey
    | InvalidRequest
    | ContextOverflow
    | QuotaExceeded,
    Field(discriminator="behaviour"),
]
"""Any behaviour the mock can play for one request."""

STEP_TYPES: tuple[type[BaseModel], ...] = (
    Success,
    SlowSuccess,
    MaxTokens,
    ReasoningSuccess,
    ToolCalls,
    Stall,
    ConnectionReset,
    StreamDisconnect,
    EmptyBody,
    MalformedJson,
    MalformedEvent,
    WrongContentType,
    RateLimit,
    ServerFault,
    ServiceUnavailable,
    BadApiKey,
    InvalidRequest,
    ContextOverflow,
    QuotaExceeded,
)

BEHAVIOURS: tuple[str, ...] = tuple(
    str(model.model_fields["behaviour"].default) for model in STEP_TYPES
)
"""Every behaviour name, in documentation order."""


def _expand_name(value: Any) -> Any:
    # A bare behaviour name is shorthand for that behaviour with its defaults.
    if isinstance(value, str):
        name = value.strip()
        if name not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {name!r}; known: {', '.join(BEHAVIOURS)}")
        return {"behaviour": name}
    return value


StepInput = Annotated[Step, BeforeValidator(_expand_name)]
"""A step as written in a script: a mapping with `behaviour`, or just the behaviour name."""

_STEP_LIST: TypeAdapter[list[StepInput]] = TypeAdapter(
    list[StepInput], config=ConfigDict(title="mock LLM steps")
)
_ONE_STEP: TypeAdapter[StepInput] = TypeAdapter(StepInput, config=ConfigDict(title="mock LLM step"))


def parse_step(value: Any) -> Step:
    """Validate one step (model, mapping or behaviour name)."""
    return _ONE_STEP.validate_python(value)


def parse_steps(values: Any) -> tuple[Step, ...]:
    """Validate a sequence of steps (models, mappings or behaviour names)."""
    return tuple(_STEP_LIST.validate_python(list(values)))


def parse_behaviour_list(names: str) -> tuple[Step, ...]:
    """Parse `a,b,c` (the CLI's --behaviours) into default-valued steps."""
    parts = [part.strip() for part in names.split(",")]
    if not any(parts):
        raise ValueError("no behaviour names given")
    if "" in parts:
        raise ValueError(f"empty behaviour name in {names!r}")
    unknown = [part for part in parts if part not in BEHAVIOURS]
    if unknown:
        raise ValueError(f"unknown behaviour {unknown[0]!r}; known: {', '.join(BEHAVIOURS)}")
    return parse_steps(parts)

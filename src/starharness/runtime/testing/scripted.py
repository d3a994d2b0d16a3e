"""An in-process provider that plays the mock LLM's script steps, for fast loop tests.

Steps are the mock's (`starharness.mockllm` step models, or the same mappings a script file
holds, `{"behaviour": "success", "text": "hi"}`); they are read by field name, so the runtime
needs nothing from the mock. Answers stream as the real provider's chunks; error steps raise
the LlmError the real provider raises for the same HTTP answer.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from ..llm.errors import LlmConnectionError, LlmError, LlmTimeoutError, ProtocolError
from ..llm.http_errors import error_from_response
from ..llm.types import (
    Finish,
    FinishReason,
    LlmRequest,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
)

ScriptStep = Any
"""A mock step model, or a mapping with a `behaviour` key and that step's fields."""

_BROKEN = frozenset({"empty_body", "malformed_json", "malformed_event", "wrong_content_type"})


class ScriptExhaustedError(LlmError):
    """A request arrived after the script's last step (and `repeat_last` is off)."""


class ScriptedProvider:
    """Plays `steps` one per request, in order; `requests` keeps what each request asked."""

    def __init__(
        self,
        steps: Iterable[ScriptStep] = (),
        *,
        name: str = "scripted",
        model: str = "scripted-model",
        repeat_last: bool = False,
    ) -> None:
        self._name = name
        self._model = model
        self._steps: deque[ScriptStep] = deque(steps)
        self._repeat_last = repeat_last
        self._last: ScriptStep | None = None
        self.requests: list[LlmRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_model(self) -> str:
        return self._model

    def add(self, *steps: ScriptStep) -> None:
        """Queue more steps after the ones not played yet."""
        self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        return _play(self._next_step())

    def _next_step(self) -> ScriptStep:
        if self._steps:
            self._last = self._steps.popleft()
            return self._last
        if self._repeat_last and self._last is not None:
            return self._last
        raise ScriptExhaustedError(
            f"scripted provider {self._name!r}: request {len(self.requests)} has no step left"
        )

    async def aclose(self) -> None:
        self._steps.clear()


def _field(step: ScriptStep, name: str, default: Any = None) -> Any:
    if isinstance(step, Mapping):
        fields: Mapping[str, Any] = step  # pyright: ignore[reportUnknownVariableType]
        return fields.get(name, default)
    return getattr(step, name, default)


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _play(step: ScriptStep) -> AsyncIterator[StreamChunk]:
    behaviour = str(_field(step, "behaviour", "success"))
    size = int(_field(step, "chunk_size", 8) or 8)
    if behaviour in ("success", "slow_success", "max_tokens", "reasoning_success"):
        reasoning = _field(step, "reasoning")
        if behaviour == "reasoning_success" and reasoning:
            for piece in _pieces(str(reasoning), size):
                yield ReasoningDelta(piece)
        for piece in _pieces(str(_field(step, "text", "mock response")), size):
            yield TextDelta(piece)
        finish: FinishReason = "max-tokens" if behaviour == "max_tokens" else "stop"
        yield Finish(finish)
        return
    if behaviour == "tool_call_success":
        async for chunk in _tool_calls(step, size):
            yield chunk
        return
    partial = str(_field(step, "partial_text", "") or "")
    for piece in _pieces(partial, size):
        yield TextDelta(piece)
    raise _error(behaviour, step)


async def _tool_calls(step: ScriptStep, size: int) -> AsyncIterator[StreamChunk]:
    reasoning = _field(step, "reasoning")
    if reasoning:
        for piece in _pieces(str(reasoning), size):
            yield ReasoningDelta(piece)
    text = _field(step, "text")
    if text:
        for piece in _pieces(str(text), size):
            yield TextDelta(piece)
    fragment = int(_field(step, "fragment_size", 8) or 8)
    calls: Sequence[Any] = _field(step, "calls", ()) or ()
    for index, call in enumerate(calls):
        arguments = _field(call, "arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        call_id = _field(call, "id") or f"call_{index}"
        yield ToolCallDelta(index, str(call_id), str(_field(call, "name")), "")
        for piece in _pieces(arguments, fragment):
            yield ToolCallDelta(index, None, None, piece)
    yield Finish("tool-calls")


def _error(behaviour: str, step: ScriptStep) -> LlmError:
    if behaviour in ("connection_reset", "stream_disconnect"):
        return LlmConnectionError(f"scripted {behaviour}: the connection was cut")
    if behaviour == "stall":
        return LlmTimeoutError("scripted stall: no answer within the timeout")
    if behaviour in _BROKEN:
        return ProtocolError(f"scripted {behaviour}: the answer was not a completion stream")
    status, body, retry_after = _http_answer(behaviour, step)
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return error_from_response(status, headers, json.dumps(body).encode())


def _http_answer(behaviour: str, step: ScriptStep) -> tuple[int, dict[str, Any], float | None]:
    message = str(_field(step, "message", "") or f"scripted {behaviour}")
    retry_after = _field(step, "retry_after_s")
    if behaviour == "rate_limit":
        return 429, _body(message, "rate_limit_error"), retry_after
    if behaviour == "server_error":
        return int(_field(step, "status", 500)), _body(message, "server_error"), None
    if behaviour == "service_unavailable":
        return 503, _body(message, "server_error"), retry_after
    if behaviour == "auth_error":
        return 401, _body(message, "invalid_request_error", "invalid_api_key"), None
    if behaviour == "invalid_request":
        return 400, _body(message, "invalid_request_error", _field(step, "code")), None
    if behaviour == "context_overflow":
        limit = _field(step, "max_context_tokens", 65536)
        text = f"This model's maximum context length is {limit} tokens."
        return 400, _body(text, "invalid_request_error", "context_length_exceeded"), None
    if behaviour == "quota_exceeded":
        body = _body(message, "insufficient_quota", "insufficient_quota")
        return int(_field(step, "status", 429)), body, None
    raise ValueError(f"unknown script step behaviour {behaviour!r}")


def _body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"message": message, "type": kind}
    if code is not None:
        error["code"] = code
    return {"error": error}

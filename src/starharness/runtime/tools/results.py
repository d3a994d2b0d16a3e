"""What a tool call produces: a success or a failure, and the outcome the loop logs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic_core import to_json

from ..llm.types import ToolCall


class FailureCode(StrEnum):
    """Why a call failed. Tools returning their own ToolFailure may use other codes."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGS = "invalid_args"
    DENIED = "denied"
    REJECTED = "rejected"
    APPROVAL_UNAVAILABLE = "approval_unavailable"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    TOOL_ERROR = "tool_error"
    HOOK_ERROR = "hook_error"
    INVALID_OUTPUT = "invalid_output"
    WITHHELD = "withheld"


@dataclass(frozen=True, slots=True)
class ToolSuccess:
    """A tool's value and the text the model reads for it."""

    value: Any
    content: str

    @classmethod
    def of(cls, value: Any) -> ToolSuccess:
        """Wrap a plain return value: strings as they are, anything else as compact JSON."""
        return cls(value, render_content(value))

    @property
    def is_error(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A failed call: the model reads exactly `Error: <message>`; the log keeps the traceback."""

    message: str
    code: str = FailureCode.TOOL_ERROR
    traceback: str | None = None

    @property
    def content(self) -> str:
        return f"Error: {self.message}"

    @property
    def is_error(self) -> bool:
        return True


ToolResult = ToolSuccess | ToolFailure


def render_content(value: Any) -> str:
    """The model-facing text of a return value (raises if it cannot be shown as JSON)."""
    if isinstance(value, str):
        return value
    return to_json(value).decode()


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """One call's final result as the loop logs it and the model reads it."""

    call: ToolCall
    result: ToolResult
    concludes_turn: bool = False
    deferred: tuple[str, ...] = ()
    """Context text the tool asked to add after the results (`ToolRunContext.defer_context`)."""

    @property
    def content(self) -> str:
        return self.result.content

    @property
    def is_error(self) -> bool:
        return isinstance(self.result, ToolFailure)

    @property
    def error_code(self) -> str | None:
        result = self.result
        return result.code if isinstance(result, ToolFailure) else None

    @property
    def traceback(self) -> str | None:
        result = self.result
        return result.traceback if isinstance(result, ToolFailure) else None

"""The result of one tool call, ready to hand to a model."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from ..errors import GodotError, GodotErrorCode


@dataclass(frozen=True, slots=True)
class GodotOutcome:
    """`text` is what the model sees: the result JSON (capped) or `Error: <message>`."""

    tool: str
    ok: bool
    text: str
    result: JsonValue = None
    error_code: GodotErrorCode | None = None
    error_message: str | None = None
    truncated: bool = False
    client_id: str | None = None
    routed_to: str | None = None
    mutating: bool = False

    @classmethod
    def failure(cls, tool: str, error: GodotError, *, mutating: bool = False) -> GodotOutcome:
        """An outcome carrying a GodotError's code and message."""
        return cls(
            tool=tool,
            ok=False,
            text=f"Error: {error.message}",
            error_code=error.code,
            error_message=error.message,
            mutating=mutating,
        )

    def raise_for_error(self) -> None:
        """Raise the failure as a GodotError (for callers that prefer exceptions)."""
        if not self.ok and self.error_code is not None:
            raise GodotError(self.error_code, self.error_message or self.text)

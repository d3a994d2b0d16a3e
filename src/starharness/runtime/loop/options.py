"""Per-agent options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..llm.types import ToolChoice

VerifyMode = Literal["off", "projection", "rebuild"]


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """Which model an agent uses and the bounds of its turns."""

    provider: str | None = None
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: ToolChoice = "auto"
    max_steps: int = 16
    """A turn needing more steps ends with reason `error`, so a looping model cannot run away."""
    turn_timeout_s: float | None = None
    """Wall-clock bound of one turn; hitting it ends the turn with reason `error`."""
    log_chunks: bool = True
    """Keep streamed chunks in the log for replay (never model-visible)."""
    verify_view: VerifyMode = "projection"
    """Check each request against the log before sending it: `projection` compares it with the
    session's projection (cheap), `rebuild` also rebuilds it from the whole log (tests, CI)."""

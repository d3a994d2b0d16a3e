"""Refusals are values: what a guard returns when it says no."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action cannot happen and how it could: the model reads the hint and adapts."""

    reason: str
    hint: str
    facts: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def as_result(self) -> dict[str, Any]:
        """The tool result the model reads: `{ok: false, reason, hint, facts}`."""
        return {"ok": False, "reason": self.reason, "hint": self.hint, "facts": dict(self.facts)}

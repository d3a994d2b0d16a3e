"""What a rule finds for one turn: passed, failed, or does not apply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .evidence import TurnEvidence


@dataclass(frozen=True, slots=True)
class Verdict:
    """A rule's finding for one turn; `passed` is None when the rule does not apply."""

    passed: bool | None
    detail: str = ""


NOT_APPLICABLE: Final = Verdict(None, "does not apply")
Rule = Callable[[TurnEvidence], Verdict]


def clip(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters for a verdict's detail."""
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""What a game declares for a resident agent: its instructions, its actions and its brief."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...runtime.codemode import CodeModeConfig
from ...runtime.tools import ToolDefinition
from ..actions import ActionAttempt, GameAction
from ..world import NewsItem, World

Brief = Callable[[World, int], str]
"""`brief(world, days)`: what the resident reads after the clock advanced `days` (blocking)."""
News = Callable[[ActionAttempt], NewsItem | None]
"""Which of the resident's committed actions players hear about as `world.event` frames."""


def _no_news(_attempt: ActionAttempt) -> NewsItem | None:
    return None


@dataclass(frozen=True, slots=True)
class Resident:
    """An agent that lives in the server and takes one turn after every clock tick.

    It acts only through `actions` (game actions with their guards, transactions and audit,
    like any NPC's); `name` selects it in `ServerSettings.residents` and is the actor id its
    actions are audited under.
    """

    name: str
    instructions: str
    """The static system prompt section (sorted before the brief, so it stays cached)."""
    actions: Sequence[GameAction[Any, Any] | ToolDefinition[Any]]
    brief: Brief
    news: News = _no_news
    max_steps: int | None = None
    """Model steps its turn may take (None: the server's `turn.max_steps`); a model that makes
    one call a step needs a step per change."""
    code_mode: CodeModeConfig | None = None
    """Also offer `run_code`: one sandboxed program that calls the resident's actions (and only
    them). Needs the profile's sandbox row and a working provider; without them the resident
    gets its actions alone, and the server logs why once."""

    def __post_init__(self) -> None:
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"resident {self.name!r}: max_steps must be 1 or more")

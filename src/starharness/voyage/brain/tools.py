"""The tools the brain knows how to use, by name, and how it calls them.

The names match the game's actions (a test checks it); the brain learns nothing else about them
except from the request, as a model would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from starharness.responder import ScriptedCall, ToolCalls

SPEAK: Final = "npc_speak"
SELL_GOODS: Final = "player_buys"
BUY_GOODS: Final = "player_sells"
SELL_INTEL: Final = "sell_intel"
OFFER_QUEST: Final = "offer_quest"
COMPLETE_QUEST: Final = "complete_quest"
CHANGE_ATTITUDE: Final = "change_attitude"
BOOK_PASSAGE: Final = "book_passage"
DECIDE: Final = "decide"
"""The framework's decision tool (decide-act-speak plan): one action with arguments, or none."""
NO_ACTION: Final = "none"
OUTCOME_PREFIX: Final = "Result of your decision: "
"""How the framework repeats a decision's result where the server shows no tool results."""
OFFERED: Final = "offered"
"""The key of a tool result whose call became an offer the player must accept."""
ACCEPT_PREFIX: Final = "I accept: "
"""How the framework tells the NPC that the player accepted one of its offers ("I accept:
<label> (<cost>). [Done: ...]", or "... [It did not go through; ...]")."""


def is_acceptance(said: str) -> bool:
    """The framework's note of an accepted offer, not a player's "I accept the job."."""
    return said.startswith(ACCEPT_PREFIX) and said.endswith("]")


DONE_MARK: Final = "[Done: "
"""Follows the accepted offer when it committed (else the reason it did not)."""

KNOWN_TOOLS: Final = frozenset(
    {
        SPEAK,
        SELL_GOODS,
        BUY_GOODS,
        SELL_INTEL,
        OFFER_QUEST,
        COMPLETE_QUEST,
        CHANGE_ATTITUDE,
        BOOK_PASSAGE,
    }
)

FRAGMENT_SIZE: Final = 12
"""Argument text per streamed event: small enough that lines visibly stream."""
PACE_MS: Final = 6.0
"""Pause between events. Without it every event lands in one read and the client, which
merges what arrives together, shows the line at once; with it a line types itself out at
about 2,000 characters a second, faster than most hosted models."""


def tool_call(name: str, arguments: Mapping[str, Any]) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=json.dumps(dict(arguments), ensure_ascii=False))


def calls_step(calls: Sequence[ScriptedCall]) -> ToolCalls:
    return ToolCalls(calls=list(calls), fragment_size=FRAGMENT_SIZE, delay_ms=PACE_MS)

"""What the brain decides for one request: say a line, or act first."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..content.prices import buy_band, sell_band
from .intents import Intent
from .options import Option
from .scene import SceneView
from .transcript import Transcript
from .voice import wares_again

FIRST_DISCOUNT = 0.95


@dataclass(frozen=True, slots=True)
class Say:
    line: str
    mood: str
    options: tuple[Option, ...]


@dataclass(frozen=True, slots=True)
class Act:
    calls: tuple[tuple[str, dict[str, Any]], ...]


Plan = Say | Act


@dataclass(frozen=True, slots=True)
class Situation:
    """Everything one decision looks at."""

    transcript: Transcript
    scene: SceneView
    intent: Intent
    addr: str

    def wares(self, limit: int = 3) -> str:
        """What the NPC sells (see `wares_again`)."""
        return wares_again(self.scene, self.transcript.last_line, limit)

    def band_low(self, going: int) -> int:
        """The lowest unit price the game's price band allows."""
        return max(1, math.ceil(going * (1 - self.transcript.price_band)))


def accepted_floor(going: int) -> int:
    """The lowest unit price the brain's traders sell at: the bottom of the game's sell band."""
    return sell_band(going).low


def buy_offer(going: int) -> int:
    """What the brain's traders pay a unit for what they buy: the top of the game's buy band
    (below every price they sell at, so no round trip pays), so the offer always commits."""
    return buy_band(going).high


def first_discount(going: int) -> int:
    return max(accepted_floor(going), round(going * FIRST_DISCOUNT))


def act(name: str, **arguments: Any) -> Act:
    return Act(((name, arguments),))

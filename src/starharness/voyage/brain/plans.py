"""What the brain decides for one request: say a line, or act first."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .intents import Intent
from .options import Option
from .scene import SceneView
from .transcript import Transcript

ACCEPT_SHARE = 0.9
"""The lowest share of the going price the brain's traders accept without a fight."""
FIRST_DISCOUNT = 0.95
BUY_SHARE = 0.85
"""The most the brain's traders pay, as a share of the going price: the game's traders buy
below what they sell at (the lowest they sell at is ACCEPT_SHARE), so no round trip pays."""


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

    def band_low(self, going: int) -> int:
        """The lowest unit price the game's price band allows."""
        return max(1, math.ceil(going * (1 - self.transcript.price_band)))


def accepted_floor(going: int) -> int:
    return math.ceil(going * ACCEPT_SHARE)


def buy_offer(going: int) -> int:
    """What the brain's traders pay a unit for what they buy."""
    return max(1, min(math.floor(going * BUY_SHARE), accepted_floor(going) - 1))


def first_discount(going: int) -> int:
    return max(accepted_floor(going), round(going * FIRST_DISCOUNT))


def act(name: str, **arguments: Any) -> Act:
    return Act(((name, arguments),))

"""The shape of the HUD data (`World.player_view`), declared for the frame schema."""

from __future__ import annotations

from pydantic import Field

from starharness.npc.frames import WireModel


class HudPlace(WireModel):
    id: str
    name: str


class StarterHud(WireModel):
    """The customer's coins, cups drunk, the day and where they are."""

    player_id: str
    name: str
    coins: int = Field(ge=0)
    cups: int = Field(ge=0)
    day: int = Field(ge=1)
    location: HudPlace
    attitudes: dict[str, int] = Field(default_factory=dict[str, int])

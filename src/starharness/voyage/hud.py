"""The HUD a player sees: the shape of `World.player_view`, declared for the frame schema."""

from __future__ import annotations

from pydantic import Field

from starharness.npc.frames import WireModel


class HudPerson(WireModel):
    id: str
    name: str


class HudPlace(WireModel):
    """Where the player stands; a `hud` frame with a new place is the player's arrival."""

    id: str
    name: str
    description: str = ""
    """What the place looks like (a client may pick its scene by `id`)."""
    people: list[HudPerson] = Field(default_factory=list[HudPerson])
    """The NPCs here, whom the player may meet."""


class HudCargo(WireModel):
    good_id: str
    name: str
    qty: int = Field(ge=1)


class HudNews(WireModel):
    location_id: str
    day: int = Field(ge=1)
    headline: str


class VoyageHud(WireModel):
    """The player's credits, day, place, hold, and how the NPCs they met feel about them."""

    player_id: str
    name: str
    credits: int = Field(ge=0)
    day: int = Field(ge=1)
    location: HudPlace
    cargo: list[HudCargo]
    attitudes: dict[str, int] = Field(default_factory=dict[str, int])
    """NPC id -> attitude towards the player (-100..100), for NPCs that have one; a `hud`
    frame after an attitude change carries the new value."""
    news: list[HudNews] = Field(default_factory=list[HudNews])
    """The latest world events anywhere, newest first (a reloaded page's news ticker)."""

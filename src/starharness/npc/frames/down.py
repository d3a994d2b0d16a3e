"""Frames the harness sends to engines, in their generic form (any mood, any attitude).

A game narrows `mood`, `attitude` and the HUD shape with `build_protocol`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue

from .base import (
    PROTOCOL_REVISION,
    PROTOCOL_VERSION,
    Frame,
    WireModel,
    omit_none,
    optional_string_schema,
)
from .errors import ErrorCode, FrameError

NonEmpty = Annotated[str, Field(min_length=1)]
HudData = dict[str, JsonValue]
"""The generic HUD payload: any JSON object; a game may declare a model instead."""


def _speaker() -> Any:
    return Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="In a scene: the id of the NPC this is from (in a shared scene, of the "
        "player, for another player's line). Left out of a plain encounter.",
    )


class NpcEntry(WireModel):
    """One NPC the player can walk up to."""

    id: NonEmpty
    name: str
    location_id: str


class OfferTerms(WireModel):
    """What makes an option an offer: picking it commits a game action that takes from the
    player, once, after the world checked it again."""

    action: NonEmpty = Field(description="The game action that picking the offer commits.")
    cost: str = Field(
        description="What the player gives, in the game's words (a price, goods); may be empty."
    )


class OptionItem(WireModel):
    """One reply the player can pick instead of typing, or an offer the player may accept."""

    id: NonEmpty = Field(description="What the client sends back as `optionId`.")
    label: NonEmpty = Field(description="What the player sees (and what the NPC hears).")
    offer: OfferTerms | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description=(
            "Present when picking this option accepts an offer: the harness commits the "
            "action at once (an `action` frame follows before the NPC speaks). Clients that "
            "ignore it still work: the item is an ordinary option to them."
        ),
    )


class SceneNpc(WireModel):
    """One NPC of a scene, as `encounter.opened` lists them."""

    id: NonEmpty
    name: str
    attitude: int = Field(description="The NPC's attitude towards the player, in the game's range.")


class ScenePlayer(WireModel):
    """One player in a shared scene, as `scene.players` lists them."""

    id: NonEmpty
    name: NonEmpty = Field(description="What the others call the player (the HUD's `name`).")


class Welcome(Frame):
    """Answers `hello`: the protocol version, the player's HUD and the NPCs there are."""

    t: Literal["welcome"] = "welcome"
    protocol: Literal[1] = PROTOCOL_VERSION
    revision: int = Field(
        default=PROTOCOL_REVISION,
        description="Additions within this version the server speaks (2: scenes, 3: scenes "
        "several players join). Absent from servers of revision 1.",
    )
    hud: HudData
    npcs: list[NpcEntry]


class EncounterOpened(Frame):
    """The encounter exists; sent at once, before any model call."""

    t: Literal["encounter.opened"] = "encounter.opened"
    id: NonEmpty
    npc_name: str
    attitude: int = Field(description="The NPC's attitude towards the player, in the game's range.")
    speaker_id: NonEmpty | None = _speaker()
    npcs: list[SceneNpc] | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="In a scene: every NPC in it, in the order `npcIds` named them. "
        "`npcName`, `attitude` and `speakerId` are those of the NPC who holds the floor first.",
    )


class SayDelta(Frame):
    """The next piece of the NPC's line, as soon as the model produced it."""

    t: Literal["say.delta"] = "say.delta"
    id: NonEmpty
    text: NonEmpty
    speaker_id: NonEmpty | None = _speaker()
    speaker_name: NonEmpty | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="In a shared scene (revision 3): the name of the player whose line this "
        "is, when `speakerId` is another player's id (an NPC's name is in `npcs`).",
    )


class SayEnd(Frame):
    """The NPC's line is complete; `mood` is one of the game's declared moods."""

    t: Literal["say.end"] = "say.end"
    id: NonEmpty
    mood: NonEmpty
    speaker_id: NonEmpty | None = _speaker()


class Options(Frame):
    """Replies the player may pick; replaces any earlier options of this encounter. In a
    scene they are lines to the NPC in `speakerId`, whose turn offered them."""

    t: Literal["options"] = "options"
    id: NonEmpty
    items: list[OptionItem]
    speaker_id: NonEmpty | None = _speaker()


class ActionFrame(Frame):
    """The NPC acted on the world; presentation only, the change is already committed."""

    t: Literal["action"] = "action"
    id: NonEmpty
    name: NonEmpty
    ok: bool = Field(description="False when a guard refused the action; nothing changed then.")
    summary: str
    speaker_id: NonEmpty | None = _speaker()


class EncounterIdle(Frame):
    """The turn is over; the client may accept input again."""

    t: Literal["encounter.idle"] = "encounter.idle"
    id: NonEmpty


class ScenePlayers(Frame):
    """Who is in a shared scene now (revision 3): sent to every player of a scene opened with
    `join` whenever a player joins or leaves it. Private scenes and encounters never get it."""

    t: Literal["scene.players"] = "scene.players"
    id: NonEmpty = Field(description="The receiving player's own encounter id for the scene.")
    players: list[ScenePlayer] = Field(
        description="Every player in the scene now, the receiver among them, in the order "
        "they came."
    )


class ErrorFrame(Frame):
    """A frame or turn failed; `id` names the encounter when there is one."""

    t: Literal["error"] = "error"
    id: NonEmpty | None = Field(
        default=None, exclude_if=omit_none, json_schema_extra=optional_string_schema
    )
    code: ErrorCode
    message: str

    @classmethod
    def from_error(cls, error: FrameError) -> ErrorFrame:
        """The frame that reports a refused frame (or any FrameError) to the client."""
        return cls(id=error.encounter_id, code=error.code, message=error.message)


class WorldEvent(Frame):
    """Something happened in the world (broadcast after `world.tick`)."""

    t: Literal["world.event"] = "world.event"
    location_id: str
    headline: str


class Hud(Frame):
    """The player's game-defined view, sent after any committed change that affects it."""

    t: Literal["hud"] = "hud"
    player_id: NonEmpty
    data: HudData


DOWN_FRAME_TYPES: tuple[type[Frame], ...] = (
    Welcome,
    EncounterOpened,
    SayDelta,
    SayEnd,
    Options,
    ActionFrame,
    EncounterIdle,
    ScenePlayers,
    ErrorFrame,
    WorldEvent,
    Hud,
)

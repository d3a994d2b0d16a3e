"""Frames an engine sends to the harness."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from .base import MAX_SCENE_NPCS, Frame, omit_none, optional_string_schema

NonEmpty = Annotated[str, Field(min_length=1)]


class Hello(Frame):
    """Binds the connection to one player; answered by `welcome`."""

    t: Literal["hello"] = "hello"
    player_id: NonEmpty = Field(description="The player this connection acts for from now on.")
    token: NonEmpty | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="The player token the game's backend issued (servers with player tokens).",
    )


class EncounterOpen(Frame):
    """The player walks up to an NPC, or to a group of them (a scene); answered by
    `encounter.opened` or `error`."""

    t: Literal["encounter.open"] = "encounter.open"
    id: NonEmpty = Field(description="Encounter id chosen by the client, unique per connection.")
    npc_id: NonEmpty = Field(
        description="The NPC the player walks up to; in a scene, the one who holds the floor "
        "first (and greets, in a game whose NPCs greet)."
    )
    player_id: NonEmpty
    npc_ids: Annotated[list[NonEmpty], Field(min_length=1, max_length=MAX_SCENE_NPCS)] | None = (
        Field(
            default=None,
            exclude_if=omit_none,
            json_schema_extra=optional_string_schema,
            description=f"A scene: every NPC in it (1 to {MAX_SCENE_NPCS}, `npcId` among them, "
            "all in one place). Every frame that speaks then names its speaker in `speakerId`. "
            "Left out: a plain encounter with `npcId` alone, exactly as in revision 1.",
        )
    )
    join: bool | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="With `npcIds` (revision 3): join the open shared scene of exactly these "
        "NPCs at the player's place, or open one that other players may join. Left out (or "
        "false): a scene of this player alone, as in revision 2.",
    )

    @model_validator(mode="after")
    def _a_scene_names_each_npc_once(self) -> Self:
        ids = self.npc_ids
        if ids is None:
            if self.join:
                raise ValueError("'join' needs 'npcIds': the NPCs of the scene to join")
            return self
        repeated = sorted({npc for npc in ids if ids.count(npc) > 1})
        if repeated:
            raise ValueError(f"'npcIds' names an NPC more than once: {', '.join(repeated)}")
        if self.npc_id not in ids:
            raise ValueError(f"'npcId' {self.npc_id!r} must be one of 'npcIds'")
        return self


class EncounterSay(Frame):
    """The player speaks: exactly one of free `text` or the `optionId` of the last options."""

    t: Literal["encounter.say"] = "encounter.say"
    id: NonEmpty
    text: NonEmpty | None = Field(
        default=None, exclude_if=omit_none, json_schema_extra=optional_string_schema
    )
    option_id: NonEmpty | None = Field(
        default=None, exclude_if=omit_none, json_schema_extra=optional_string_schema
    )
    to: NonEmpty | None = Field(
        default=None,
        exclude_if=omit_none,
        json_schema_extra=optional_string_schema,
        description="In a scene: the NPC (its id) the player speaks to. Left out, the NPC the "
        "text names answers, else the one who spoke last (see docs/protocol.md, Scenes).",
    )

    @model_validator(mode="after")
    def _exactly_one_input(self) -> Self:
        if self.text is None and self.option_id is None:
            raise ValueError("exactly one of 'text' or 'optionId' is required, got neither")
        if self.text is not None and self.option_id is not None:
            raise ValueError("exactly one of 'text' or 'optionId' is required, got both")
        return self


class EncounterClose(Frame):
    """The player walks away; a running turn is cancelled and the NPC's agent disposed."""

    t: Literal["encounter.close"] = "encounter.close"
    id: NonEmpty


class WorldTick(Frame):
    """Advance the world clock; the harness broadcasts the resulting `world.event` frames."""

    t: Literal["world.tick"] = "world.tick"
    days: int = Field(ge=1, description="How many days pass.")


UpFrame = Annotated[
    Hello | EncounterOpen | EncounterSay | EncounterClose | WorldTick,
    Field(discriminator="t"),
]
"""Any frame an engine may send."""

UP_FRAME_TYPES: tuple[type[Frame], ...] = (
    Hello,
    EncounterOpen,
    EncounterSay,
    EncounterClose,
    WorldTick,
)

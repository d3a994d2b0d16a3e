"""A game's frame protocol: down-frame models narrowed to its moods, attitude range and HUD."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal, TypeVar, Union, cast

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

from .base import PROTOCOL_REVISION, PROTOCOL_VERSION, Frame
from .down import (
    ActionFrame,
    EncounterIdle,
    EncounterOpened,
    ErrorFrame,
    Hud,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    ScenePlayers,
    Welcome,
    WorldEvent,
)
from .parse import invalid_frame_error
from .up import UpFrame

_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_REF_TEMPLATE: Final = "#/$defs/{model}"
_FrameT = TypeVar("_FrameT", bound=Frame)


@dataclass(frozen=True, slots=True)
class FrameProtocol:
    """The frame models of one game; build frames with its classes so they are checked."""

    moods: tuple[str, ...] | None
    attitude_range: tuple[int, int] | None
    max_options: int | None
    welcome: type[Welcome]
    encounter_opened: type[EncounterOpened]
    say_delta: type[SayDelta]
    say_end: type[SayEnd]
    options: type[Options]
    action: type[ActionFrame]
    encounter_idle: type[EncounterIdle]
    scene_players: type[ScenePlayers]
    error: type[ErrorFrame]
    world_event: type[WorldEvent]
    hud: type[Hud]
    _down_adapter: TypeAdapter[Frame] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        union = cast(Any, Union)[self.down_frame_types]
        tagged = cast(Any, Annotated)[union, Field(discriminator="t")]
        adapter = cast(TypeAdapter[Frame], TypeAdapter(tagged))
        object.__setattr__(self, "_down_adapter", adapter)

    @property
    def down_frame_types(self) -> tuple[type[Frame], ...]:
        """Every down-frame model of this protocol, in documentation order."""
        return (
            self.welcome,
            self.encounter_opened,
            self.say_delta,
            self.say_end,
            self.options,
            self.action,
            self.encounter_idle,
            self.scene_players,
            self.error,
            self.world_event,
            self.hud,
        )

    def parse_down_frame(self, raw: str | bytes) -> Frame:
        """Parse a frame the harness sent (clients and tests), or raise `FrameError(bad_frame)`."""
        try:
            return self._down_adapter.validate_json(raw, strict=True, by_alias=True, by_name=False)
        except ValidationError as exc:
            tags = [str(model.model_fields["t"].default) for model in self.down_frame_types]
            raise invalid_frame_error(raw, exc, tags) from None

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of every frame in both directions, with shared `$defs`."""
        up = TypeAdapter(UpFrame).json_schema(ref_template=_REF_TEMPLATE)
        down = self._down_adapter.json_schema(ref_template=_REF_TEMPLATE)
        definitions: dict[str, Any] = {}
        for part in (up, down):
            for name, schema in part.pop("$defs", {}).items():
                if definitions.get(name, schema) != schema:
                    raise ValueError(f"two different frame schemas are both named {name!r}")
                definitions[name] = schema
        definitions["UpFrame"] = {"description": "Any frame an engine sends.", **up}
        definitions["DownFrame"] = {"description": "Any frame the harness sends.", **down}
        self._name_game_types(definitions)
        return {
            "$schema": _SCHEMA_DIALECT,
            "title": f"star-harness frame protocol v{PROTOCOL_VERSION}",
            "description": "JSON text frames between an engine and the harness, keyed by `t`.",
            "x-protocol-version": PROTOCOL_VERSION,
            "x-protocol-revision": PROTOCOL_REVISION,
            "anyOf": [{"$ref": "#/$defs/UpFrame"}, {"$ref": "#/$defs/DownFrame"}],
            "$defs": dict(sorted(definitions.items())),
        }

    def _name_game_types(self, definitions: dict[str, Any]) -> None:
        # Named definitions let engine clients generate a Mood enum and an Attitude type.
        if self.moods is not None:
            definitions["Mood"] = {
                "title": "Mood",
                "description": "The moods this game declares.",
                "type": "string",
                "enum": list(self.moods),
            }
            definitions["SayEnd"]["properties"]["mood"] = {"$ref": "#/$defs/Mood"}
        if self.attitude_range is not None:
            low, high = self.attitude_range
            definitions["Attitude"] = {
                "title": "Attitude",
                "description": "An NPC's attitude towards a player, in this game's range.",
                "type": "integer",
                "minimum": low,
                "maximum": high,
            }
            definitions["EncounterOpened"]["properties"]["attitude"] = {"$ref": "#/$defs/Attitude"}
            definitions["SceneNpc"]["properties"]["attitude"] = {"$ref": "#/$defs/Attitude"}


def build_protocol(
    moods: Sequence[str],
    attitude_range: tuple[int, int],
    hud_schema: type[BaseModel] | None = None,
    max_options: int | None = None,
) -> FrameProtocol:
    """Narrow the down frames to a game's moods, attitude range, HUD model and option cap."""
    mood_values = _checked_moods(moods)
    low, high = attitude_range
    if low > high:
        raise ValueError(f"attitude_range must be (low, high) with low <= high, got {low}, {high}")
    if max_options is not None and max_options < 1:
        raise ValueError(f"max_options must be at least 1, got {max_options}")
    mood_type = cast(Any, Literal)[mood_values]
    attitude_type = Annotated[int, Field(ge=low, le=high)]
    hud_type: Any = hud_schema if hud_schema is not None else Hud.model_fields["data"].annotation
    items_type: Any = Annotated[list[OptionItem], Field(max_length=max_options)]
    return FrameProtocol(
        moods=mood_values,
        attitude_range=(low, high),
        max_options=max_options,
        welcome=_narrow(Welcome, hud=hud_type),
        encounter_opened=_narrow(EncounterOpened, attitude=attitude_type),
        say_delta=SayDelta,
        say_end=_narrow(SayEnd, mood=mood_type),
        options=_narrow(Options, items=items_type) if max_options is not None else Options,
        action=ActionFrame,
        encounter_idle=EncounterIdle,
        scene_players=ScenePlayers,
        error=ErrorFrame,
        world_event=WorldEvent,
        hud=_narrow(Hud, data=hud_type),
    )


def _checked_moods(moods: Sequence[str]) -> tuple[str, ...]:
    if isinstance(moods, str):
        raise TypeError("moods must be a sequence of mood names, not one string")
    values = tuple(moods)
    if not values:
        raise ValueError("moods must name at least one mood")
    for mood in values:
        if not mood:
            raise ValueError("moods must not contain an empty name")
    duplicates = sorted({mood for mood in values if values.count(mood) > 1})
    if duplicates:
        raise ValueError(f"moods must be unique, repeated: {', '.join(duplicates)}")
    return values


def _narrow(base: type[_FrameT], **fields: Any) -> type[_FrameT]:
    # A subclass with the same name keeps `$defs` names stable across games.
    overrides: dict[str, Any] = {
        name: (annotation, _inherited_field(base, name)) for name, annotation in fields.items()
    }
    return create_model(base.__name__, __base__=base, __doc__=base.__doc__, **overrides)


def _inherited_field(base: type[Frame], name: str) -> Any:
    inherited = base.model_fields[name]
    return Field(description=inherited.description)


GENERIC_PROTOCOL: Final = FrameProtocol(
    moods=None,
    attitude_range=None,
    max_options=None,
    welcome=Welcome,
    encounter_opened=EncounterOpened,
    say_delta=SayDelta,
    say_end=SayEnd,
    options=Options,
    action=ActionFrame,
    encounter_idle=EncounterIdle,
    scene_players=ScenePlayers,
    error=ErrorFrame,
    world_event=WorldEvent,
    hud=Hud,
)
"""Down frames for any game: any non-empty mood, any integer attitude, any JSON object HUD."""

"""One handler method per down-frame type, and the dispatch that routes a frame to it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ..frames import (
    DOWN_FRAME_TYPES,
    ActionFrame,
    EncounterIdle,
    EncounterOpened,
    ErrorFrame,
    Frame,
    Hud,
    Options,
    SayDelta,
    SayEnd,
    ScenePlayers,
    Welcome,
    WorldEvent,
)


def handler_name(tag: str) -> str:
    """The method that handles frames of type `tag`: `say.delta` -> `on_say_delta`."""
    return "on_" + tag.replace(".", "_")


def _tag(model: type[Frame]) -> str:
    return str(model.model_fields["t"].default)


HANDLER_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {_tag(model): handler_name(_tag(model)) for model in DOWN_FRAME_TYPES}
)
"""Every down-frame type `t` and the name of the method handling it."""


class DownFrameHandler:
    """Override the `on_*` methods for the frames you render; the others do nothing."""

    def on_welcome(self, frame: Welcome) -> None:
        """The harness answered `hello`."""

    def on_encounter_opened(self, frame: EncounterOpened) -> None:
        """An encounter exists; show the NPC at once."""

    def on_say_delta(self, frame: SayDelta) -> None:
        """Append the next piece of the NPC's line."""

    def on_say_end(self, frame: SayEnd) -> None:
        """The line is complete."""

    def on_options(self, frame: Options) -> None:
        """Replace the replies the player may pick."""

    def on_action(self, frame: ActionFrame) -> None:
        """The NPC acted (already committed, or refused when `ok` is false)."""

    def on_encounter_idle(self, frame: EncounterIdle) -> None:
        """The turn is over; accept input again."""

    def on_scene_players(self, frame: ScenePlayers) -> None:
        """Who is in a shared scene now: a player joined or left."""

    def on_error(self, frame: ErrorFrame) -> None:
        """A request was refused or a turn failed."""

    def on_world_event(self, frame: WorldEvent) -> None:
        """Something happened in the world."""

    def on_hud(self, frame: Hud) -> None:
        """The player's view changed."""


def dispatch(handler: DownFrameHandler, frame: Frame) -> None:
    """Call the handler method for `frame`'s type; a frame of no known type is a bug."""
    match frame:
        case Welcome():
            handler.on_welcome(frame)
        case EncounterOpened():
            handler.on_encounter_opened(frame)
        case SayDelta():
            handler.on_say_delta(frame)
        case SayEnd():
            handler.on_say_end(frame)
        case Options():
            handler.on_options(frame)
        case ActionFrame():
            handler.on_action(frame)
        case EncounterIdle():
            handler.on_encounter_idle(frame)
        case ScenePlayers():
            handler.on_scene_players(frame)
        case ErrorFrame():
            handler.on_error(frame)
        case WorldEvent():
            handler.on_world_event(frame)
        case Hud():
            handler.on_hud(frame)
        case _:
            raise TypeError(f"{type(frame).__name__} is not a down frame")

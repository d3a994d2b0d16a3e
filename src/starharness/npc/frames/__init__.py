"""Frame protocol v1: the JSON frames between engines and the harness, as pydantic models."""

from .base import MAX_SCENE_NPCS, PROTOCOL_REVISION, PROTOCOL_VERSION, Frame, WireModel
from .down import (
    DOWN_FRAME_TYPES,
    ActionFrame,
    EncounterIdle,
    EncounterOpened,
    ErrorFrame,
    Hud,
    HudData,
    NpcEntry,
    OfferTerms,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    SceneNpc,
    ScenePlayer,
    ScenePlayers,
    Welcome,
    WorldEvent,
)
from .encode import encode
from .errors import ErrorCode, FrameError
from .parse import parse_up_frame
from .protocol import GENERIC_PROTOCOL, FrameProtocol, build_protocol
from .schema import schema_text, write_schema
from .up import (
    UP_FRAME_TYPES,
    EncounterClose,
    EncounterOpen,
    EncounterSay,
    Hello,
    UpFrame,
    WorldTick,
)

__all__ = [
    "DOWN_FRAME_TYPES",
    "GENERIC_PROTOCOL",
    "MAX_SCENE_NPCS",
    "PROTOCOL_REVISION",
    "PROTOCOL_VERSION",
    "UP_FRAME_TYPES",
    "ActionFrame",
    "EncounterClose",
    "EncounterIdle",
    "EncounterOpen",
    "EncounterOpened",
    "EncounterSay",
    "ErrorCode",
    "ErrorFrame",
    "Frame",
    "FrameError",
    "FrameProtocol",
    "Hello",
    "Hud",
    "HudData",
    "NpcEntry",
    "OfferTerms",
    "OptionItem",
    "Options",
    "SayDelta",
    "SayEnd",
    "SceneNpc",
    "ScenePlayer",
    "ScenePlayers",
    "UpFrame",
    "Welcome",
    "WireModel",
    "WorldEvent",
    "WorldTick",
    "build_protocol",
    "encode",
    "parse_up_frame",
    "schema_text",
    "write_schema",
]

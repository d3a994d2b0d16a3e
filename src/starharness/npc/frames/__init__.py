"""Frame protocol v1: the JSON frames between engines and the harness, as pydantic models."""

from starharness.npc.frames.base import PROTOCOL_VERSION, Frame, WireModel
from starharness.npc.frames.down import (
    DOWN_FRAME_TYPES,
    ActionFrame,
    EncounterIdle,
    EncounterOpened,
    ErrorFrame,
    Hud,
    HudData,
    NpcEntry,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    Welcome,
    WorldEvent,
)
from starharness.npc.frames.encode import encode
from starharness.npc.frames.errors import ErrorCode, FrameError
from starharness.npc.frames.parse import parse_up_frame
from starharness.npc.frames.protocol import GENERIC_PROTOCOL, Protocol, build_protocol
from starharness.npc.frames.schema import schema_text, write_schema
from starharness.npc.frames.up import (
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
    "Hello",
    "Hud",
    "HudData",
    "NpcEntry",
    "OptionItem",
    "Options",
    "Protocol",
    "SayDelta",
    "SayEnd",
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

"""Encounters: the lifecycle of one NPC conversation and the mapping of its events to frames."""

from .archetype_kit import DEFAULT_ARCHETYPE, ArchetypeKit
from .conclusion import SpeechConclusion
from .encounter import HEARD_CONTEXT, PERSONA_ORDER, TRANSCRIPT_KIND, Encounter
from .game_tools import GameDefinitionError, GameKit
from .host import EncounterHost
from .mapping import FrameMapper, FrameSink, SceneFrames, SpeechStyle, error_code_for
from .meeting import meet_together
from .prefix_warmer import PrefixWarmer, StaticPrefix, static_prefix
from .presets import ARCHETYPE_ORDER, PROTOCOL_ORDER, ArchetypePreset, ArchetypePresets
from .speech_stream import LineStream
from .speech_tool import DEFAULT_DESCRIPTION, HEARD, define_speech_tool

__all__ = [
    "ARCHETYPE_ORDER",
    "DEFAULT_ARCHETYPE",
    "DEFAULT_DESCRIPTION",
    "HEARD",
    "HEARD_CONTEXT",
    "PERSONA_ORDER",
    "PROTOCOL_ORDER",
    "TRANSCRIPT_KIND",
    "ArchetypeKit",
    "ArchetypePreset",
    "ArchetypePresets",
    "Encounter",
    "EncounterHost",
    "FrameMapper",
    "FrameSink",
    "GameDefinitionError",
    "GameKit",
    "LineStream",
    "PrefixWarmer",
    "SceneFrames",
    "SpeechConclusion",
    "SpeechStyle",
    "StaticPrefix",
    "define_speech_tool",
    "error_code_for",
    "meet_together",
    "static_prefix",
]

"""Encounters: the lifecycle of one NPC conversation and the mapping of its events to frames."""

from .conclusion import SpeechConclusion
from .game_tools import GameDefinitionError, GameKit
from .lifecycle import (
    PERSONA_ORDER,
    PROTOCOL_ORDER,
    TRANSCRIPT_KIND,
    Encounter,
    EncounterHost,
)
from .mapping import FrameMapper, FrameSink, SpeechStyle, error_code_for
from .speech_stream import LineStream
from .speech_tool import DEFAULT_DESCRIPTION, HEARD, define_speech_tool

__all__ = [
    "DEFAULT_DESCRIPTION",
    "HEARD",
    "PERSONA_ORDER",
    "PROTOCOL_ORDER",
    "TRANSCRIPT_KIND",
    "Encounter",
    "EncounterHost",
    "FrameMapper",
    "FrameSink",
    "GameDefinitionError",
    "GameKit",
    "LineStream",
    "SpeechConclusion",
    "SpeechStyle",
    "define_speech_tool",
    "error_code_for",
]

"""Speech streaming: the NPC's line extracted from tool-call arguments while they arrive."""

from starharness.npc.speech._string_decoder import REPLACEMENT
from starharness.npc.speech.extractor import LineExtractor
from starharness.npc.speech.final import (
    FinalSpeech,
    SpeechFields,
    SpokenOption,
    parse_arguments,
    read_line,
    read_mood,
    read_options,
    read_speech,
)

__all__ = [
    "REPLACEMENT",
    "FinalSpeech",
    "LineExtractor",
    "SpeechFields",
    "SpokenOption",
    "parse_arguments",
    "read_line",
    "read_mood",
    "read_options",
    "read_speech",
]

"""Speech streaming: the NPC's line extracted from tool-call arguments while they arrive."""

from ._string_decoder import REPLACEMENT
from .extractor import LineExtractor
from .final import (
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

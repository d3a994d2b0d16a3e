"""Speech streaming: the NPC's line extracted from tool-call arguments while they arrive, kept
free of claims of a deal the world did not make, and spliced back into the arguments as heard."""

from ._string_decoder import REPLACEMENT
from .claims import ENGLISH_CLAIMS, ClaimFilter, ClaimRule
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
from .splice import with_line
from .words import copies, longest_run, plain_words

__all__ = [
    "ENGLISH_CLAIMS",
    "REPLACEMENT",
    "ClaimFilter",
    "ClaimRule",
    "FinalSpeech",
    "LineExtractor",
    "SpeechFields",
    "SpokenOption",
    "copies",
    "longest_run",
    "parse_arguments",
    "plain_words",
    "read_line",
    "read_mood",
    "read_options",
    "read_speech",
    "with_line",
]

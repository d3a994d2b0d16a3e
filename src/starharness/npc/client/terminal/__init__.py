"""A terminal conversation over the frame protocol: numbered choices, streamed lines."""

from .commands import HELP_TEXT, Command, parse_command
from .render import ERROR_WORDS, error_words, hud_changes, hud_summary
from .session import EXIT_FAILED, EXIT_OK, TalkSettings, run_talk
from .stdin import input_lines
from .view import TalkView

__all__ = [
    "ERROR_WORDS",
    "EXIT_FAILED",
    "EXIT_OK",
    "HELP_TEXT",
    "Command",
    "TalkSettings",
    "TalkView",
    "error_words",
    "hud_changes",
    "hud_summary",
    "input_lines",
    "parse_command",
    "run_talk",
]

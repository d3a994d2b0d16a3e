"""Writing to the terminal: whole lines, and an NPC line that grows as deltas arrive."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

_PROMPT_STYLE = "bold"


class Printer:
    """Keeps streamed text, the prompt and whole lines from running into each other."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._line_open = False
        self._waiting_prompt: str | None = None
        # A prompt that lines arriving unasked (another player's, in a shared scene) pushed up.
        self._interrupted: str | None = None

    def line(self, text: str, style: str = "") -> None:
        """Print one whole line; a prompt waiting for input is shown again below it."""
        prompt = self._waiting_prompt
        self.end_stream()
        self._console.print(Text(text, style=style), soft_wrap=True)
        if prompt is not None:
            self.prompt(prompt)

    def stream(self, text: str, style: str = "") -> None:
        """Append to the current line without ending it."""
        if self._waiting_prompt is not None:
            self._interrupted = self._waiting_prompt
            self.end_stream()
        self._console.print(Text(text, style=style), end="", soft_wrap=True)
        self._line_open = True
        self._console.file.flush()

    def end_stream(self, suffix: str = "", style: str = "") -> None:
        """End the open line, if there is one, with an optional styled suffix."""
        self._waiting_prompt = None
        if not self._line_open:
            return
        self._line_open = False
        self._console.print(Text(suffix, style=style), soft_wrap=True)

    def prompt(self, text: str) -> None:
        """Show the input prompt and remember it until the input is taken."""
        self.end_stream()
        self._console.print(Text(text, style=_PROMPT_STYLE), end="", soft_wrap=True)
        self._line_open = True
        self._waiting_prompt = text
        self._console.file.flush()

    def restore_prompt(self) -> None:
        """Show the prompt again if lines arriving while input was awaited pushed it up."""
        prompt = self._interrupted
        self._interrupted = None
        if prompt is not None and not self._line_open:
            self.prompt(prompt)

    def input_taken(self) -> None:
        """The terminal echoed a typed line and its newline: the prompt's line is closed."""
        self._line_open = False
        self._waiting_prompt = None
        self._interrupted = None

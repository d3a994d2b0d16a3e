"""One speaking call's line as it streams: extracted at once, never retracted, not resent."""

from __future__ import annotations

import re
from typing import Final

from ..speech import LineExtractor
from .entities import EntityStream, looks_like_arguments

_QUOTED_KEY: Final = re.compile(r'"\w*"?\s*(?::\s*)?')
_CALL_OPENINGS: Final = ("functions.", "<tool_call>")


def _may_become_call(opening: str) -> bool:
    """Whether a line's opening may still turn into call syntax (`"action": {`, `<tool_call>`).

    Narrow on purpose: an ordinary first word is streamed at once, so first words stay fast.
    """
    start = opening.lstrip()
    return (
        not start
        or any(prefix.startswith(start) for prefix in _CALL_OPENINGS)
        or _QUOTED_KEY.fullmatch(start) is not None
    )


class LineStream:
    """Feeds argument fragments of one speaking call and returns only text not yet sent.

    After a retry the model streams the call again from the start: `restart` forgets the
    extractor but keeps what was sent, so the repeated beginning is not sent twice. HTML
    entities are decoded on the way out (positions are counted in the extracted text).
    A line that opens like call syntax (a small model copying a tool result into what it says)
    is never streamed: its opening is held until it is clearly words, and `is_call` says so.
    """

    __slots__ = (
        "_entities",
        "_extractor",
        "_field",
        "_opening",
        "_parts",
        "_produced",
        "_raw_sent",
        "_verdict",
    )

    def __init__(self, field: str) -> None:
        self._field = field
        self._extractor = LineExtractor(field)
        self._entities = EntityStream()
        self._parts: list[str] = []
        self._raw_sent = 0
        self._produced = 0
        # Until the opening is judged: the text held back, and then "speech" or "call".
        self._opening = ""
        self._verdict = ""

    @property
    def is_call(self) -> bool:
        """Whether the line opened like call syntax (JSON, `functions.x`), so nothing was sent."""
        return self._verdict == "call"

    def feed(self, fragment: str) -> str:
        """Consume a fragment; return the new text to send (often empty)."""
        text = self._extractor.feed(fragment)
        if not text:
            return ""
        start = self._produced
        self._produced = start + len(text)
        overlap = self._raw_sent - start
        if overlap > 0:
            if overlap >= len(text):
                return ""
            text = text[overlap:]
        self._raw_sent += len(text)
        text = self._judged(self._entities.feed(text))
        if text:
            self._parts.append(text)
        return text

    def _judged(self, text: str) -> str:
        """`text` once the line's opening is known to be words; '' while held or for a call."""
        if self._verdict == "speech":
            return text
        if self._verdict == "call":
            return ""
        opening = self._opening + text
        if looks_like_arguments(opening):
            self._verdict = "call"
            self._opening = ""
            return ""
        if _may_become_call(opening):
            self._opening = opening
            return ""
        self._verdict = "speech"
        self._opening = ""
        return opening

    def restart(self) -> None:
        """The call is streamed again from its first fragment (the request was retried)."""
        self._extractor = LineExtractor(self._field)
        self._produced = 0

    @property
    def sent(self) -> str:
        """Everything sent so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def remainder(self, line: str) -> str:
        """What of the completed `line` is still unsent ('' when it does not extend `sent`)."""
        sent = self.sent
        if len(line) <= len(sent) or not line.startswith(sent):
            return ""
        return line[len(sent) :]

    def add(self, text: str) -> None:
        """Record text sent outside the stream (the rest of a completed line)."""
        self._parts.append(text)

"""One speaking call's line as it streams: extracted at once, never retracted, not resent."""

from __future__ import annotations

import re
from typing import Final

from ..speech import ClaimFilter, ClaimRule, LineExtractor
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
    With `claims` (the turn committed nothing), a sentence claiming a done deal is left out
    (`ClaimFilter`): `sent` is what the player heard. With `known=False` (the step may still
    commit) a claim waits for `settle`.
    """

    __slots__ = (
        "_claims",
        "_entities",
        "_extractor",
        "_field",
        "_finished",
        "_opening",
        "_parts",
        "_produced",
        "_raw_sent",
        "_seen",
        "_verdict",
    )

    def __init__(self, field: str, claims: ClaimRule | None = None, *, known: bool = True) -> None:
        self._field = field
        self._extractor = LineExtractor(field)
        self._entities = EntityStream()
        self._parts: list[str] = []
        # The line's words as the model wrote them (decoded), sent or not.
        self._seen: list[str] = []
        self._raw_sent = 0
        self._produced = 0
        # Until the opening is judged: the text held back, and then "speech" or "call".
        self._opening = ""
        self._verdict = ""
        # Where the turn committed nothing: the line without its claims of a done deal.
        self._claims = None if claims is None else ClaimFilter(claims, known=known)
        self._finished = False

    @property
    def is_call(self) -> bool:
        """Whether the line opened like call syntax (JSON, `functions.x`), so nothing was sent."""
        return self._verdict == "call"

    def feed(self, fragment: str) -> str:
        """Consume a fragment; return the new text to send (often empty)."""
        text = self._words(self._extractor.feed(fragment))
        if text:
            self._seen.append(text)
        claims = self._claims
        if claims is not None:
            text = claims.feed(text) if text else ""
            if self._extractor.complete and not self._finished:
                # The closing quote ends the last sentence: it is decided now, not after the
                # mood and options the model writes next.
                self._finished = True
                text += claims.finish()
        if text:
            self._parts.append(text)
        return text

    def _words(self, text: str) -> str:
        """The decoded, judged text of newly extracted `text` not streamed before a retry."""
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
        return self._judged(self._entities.feed(text))

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

    @property
    def left_out(self) -> bool:
        """Whether a sentence claiming a done deal was left out of what was sent."""
        return self._claims is not None and self._claims.dropped

    @property
    def unsettled(self) -> bool:
        """Whether the line waits to learn if the turn committed (`settle`)."""
        return self._claims is not None and not self._claims.known

    @property
    def waiting(self) -> bool:
        """Whether a claim, and what followed it, waits for `settle`."""
        return self._claims is not None and self._claims.waiting

    def settle(self, committed: bool) -> str:
        """The step's actions ran: the text to send of what waited (recorded as sent)."""
        if self._claims is None:
            return ""
        text = self._claims.settle(committed)
        if text:
            self._parts.append(text)
        return text

    def remainder(self, line: str) -> str:
        """What of the completed `line` is still to send ('' when it does not extend what the
        stream saw); a line checked for claims is decided to its end."""
        seen = "".join(self._seen)
        rest = line[len(seen) :] if len(line) > len(seen) and line.startswith(seen) else ""
        if rest:
            self._seen[:] = [seen, rest]
        claims = self._claims
        if claims is None:
            return rest
        self._finished = True
        return (claims.feed(rest) if rest else "") + claims.finish()

    def add(self, text: str) -> None:
        """Record text sent outside the stream (the rest of a completed line)."""
        self._parts.append(text)

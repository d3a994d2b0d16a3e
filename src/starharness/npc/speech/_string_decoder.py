"""Incremental decoding of a JSON string body whose escapes may be split across fragments."""

from __future__ import annotations

import re
from typing import Final

REPLACEMENT: Final = "\ufffd"
"""What a lone surrogate or an invalid escape decodes to (frames must stay valid UTF-8)."""

_QUOTE_OR_BACKSLASH: Final = re.compile(r'["\\]')
_SHORT_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_UNICODE_ESCAPE_LENGTH: Final = 6  # \uXXXX


class StringDecoder:
    """Decodes the text after an opening quote up to the closing quote, one fragment at a time.

    Output only ever grows: a partial escape or a high surrogate waiting for its low half is held
    back until it is complete, never emitted and then corrected.
    """

    __slots__ = ("_escape", "_high_surrogate", "closed")

    def __init__(self) -> None:
        self._escape = ""
        self._high_surrogate = 0
        self.closed = False

    def reset(self) -> None:
        """Start a new string."""
        self._escape = ""
        self._high_surrogate = 0
        self.closed = False

    def decode(self, text: str, pos: int, sink: list[str]) -> int:
        """Append what `text[pos:]` decodes to; return where decoding stopped.

        Stops right after the closing quote (then `closed` is true) or at the end of `text`.
        """
        end = len(text)
        while pos < end:
            if self._escape:
                pos = self._continue_escape(text, pos, sink)
                continue
            match = _QUOTE_OR_BACKSLASH.search(text, pos)
            stop = end if match is None else match.start()
            if stop > pos:
                if self._high_surrogate:
                    self._drop_high_surrogate(sink)
                sink.append(text[pos:stop])
            if stop == end:
                return end
            if text[stop] == '"':
                if self._high_surrogate:
                    self._drop_high_surrogate(sink)
                self.closed = True
                return stop + 1
            self._escape = "\\"
            pos = stop + 1
        return pos

    def _continue_escape(self, text: str, pos: int, sink: list[str]) -> int:
        if self._escape == "\\":
            char = text[pos]
            if char == "u":
                self._escape = "\\u"
                return pos + 1
            self._escape = ""
            if self._high_surrogate:
                self._drop_high_surrogate(sink)
            sink.append(_SHORT_ESCAPES.get(char, REPLACEMENT))
            return pos + 1
        wanted = text[pos : pos + _UNICODE_ESCAPE_LENGTH - len(self._escape)]
        for offset, char in enumerate(wanted):
            if char not in _HEX_DIGITS:
                # The bad character is not part of the escape: it may be the closing quote.
                self._escape = ""
                if self._high_surrogate:
                    self._drop_high_surrogate(sink)
                sink.append(REPLACEMENT)
                return pos + offset
        escape = self._escape + wanted
        if len(escape) < _UNICODE_ESCAPE_LENGTH:
            self._escape = escape
        else:
            self._escape = ""
            self._code_unit(int(escape[2:], 16), sink)
        return pos + len(wanted)

    def _code_unit(self, unit: int, sink: list[str]) -> None:
        if 0xD800 <= unit <= 0xDBFF:
            if self._high_surrogate:
                self._drop_high_surrogate(sink)
            self._high_surrogate = unit
        elif 0xDC00 <= unit <= 0xDFFF:
            if self._high_surrogate:
                high = self._high_surrogate
                self._high_surrogate = 0
                sink.append(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)))
            else:
                sink.append(REPLACEMENT)
        else:
            if self._high_surrogate:
                self._drop_high_surrogate(sink)
            sink.append(chr(unit))

    def _drop_high_surrogate(self, sink: list[str]) -> None:
        self._high_surrogate = 0
        sink.append(REPLACEMENT)

"""Streams one top-level string field out of tool-call argument JSON while it is still arriving."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ._string_decoder import StringDecoder

_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_STRING_END_OR_ESCAPE: Final = re.compile(r'["\\]')
_NESTED_SYNTAX: Final = re.compile(r'["{}\[\]]')
_SCALAR_END: Final = re.compile(r"[,}]")

_Handler = Callable[[str, int, list[str]], int]


class LineExtractor:
    """Feed argument text in any fragments; each `feed` returns the newly decoded part of `field`.

    Only the first string value of the top-level key `field` is streamed; keys and values
    elsewhere (nested ones too) are skipped without decoding. Every input character is looked at a
    bounded number of times, so the cost is linear in the total length. Output is never
    retracted: escapes are held back until complete, a lone surrogate or an invalid escape
    becomes U+FFFD, and input that is not a JSON object stops the stream quietly.

    `started` turns true when the target string's opening quote arrives, `complete` when its
    closing quote does (nothing is emitted after that).
    """

    __slots__ = (
        "_decoder",
        "_depth",
        "_handler",
        "_key_is_target",
        "_key_parts",
        "_skip_escape",
        "complete",
        "field",
        "started",
    )

    def __init__(self, field: str = "line") -> None:
        self.field = field
        self.started = False
        self.complete = False
        self._decoder = StringDecoder()
        self._key_parts: list[str] = []
        self._key_is_target = False
        self._depth = 0
        self._skip_escape = False
        self._handler: _Handler = self._before_object

    def feed(self, fragment: str) -> str:
        """Consume the next fragment; return the decoded text it completed (often empty)."""
        out: list[str] = []
        pos = 0
        end = len(fragment)
        while pos < end:
            pos = self._handler(fragment, pos, out)
        if not out:
            return ""
        return out[0] if len(out) == 1 else "".join(out)

    # Each handler consumes from `pos` and returns the new position; it moves to another
    # state by replacing `self._handler`. A handler that does not advance always switches.

    def _before_object(self, text: str, pos: int, out: list[str]) -> int:
        pos = _skip_whitespace(text, pos)
        if pos == len(text):
            return pos
        self._handler = self._expect_key if text[pos] == "{" else self._finished
        return pos + 1

    def _expect_key(self, text: str, pos: int, out: list[str]) -> int:
        pos = _skip_whitespace(text, pos)
        if pos == len(text):
            return pos
        char = text[pos]
        if char == '"':
            self._decoder.reset()
            self._key_parts.clear()
            self._handler = self._key
        else:
            # "}" ends the object; anything else is not JSON we can follow.
            self._handler = self._finished
        return pos + 1

    def _key(self, text: str, pos: int, out: list[str]) -> int:
        pos = self._decoder.decode(text, pos, self._key_parts)
        if self._decoder.closed:
            self._key_is_target = "".join(self._key_parts) == self.field
            self._handler = self._expect_colon
        return pos

    def _expect_colon(self, text: str, pos: int, out: list[str]) -> int:
        pos = _skip_whitespace(text, pos)
        if pos == len(text):
            return pos
        self._handler = self._expect_value if text[pos] == ":" else self._finished
        return pos + 1

    def _expect_value(self, text: str, pos: int, out: list[str]) -> int:
        pos = _skip_whitespace(text, pos)
        if pos == len(text):
            return pos
        char = text[pos]
        if char == '"':
            if self._key_is_target:
                self.started = True
                self._decoder.reset()
                self._handler = self._target
            else:
                self._skip_escape = False
                self._handler = self._skipped_string
            return pos + 1
        if char in "{[":
            self._depth = 1
            self._handler = self._nested
            return pos + 1
        self._handler = self._scalar
        return pos

    def _target(self, text: str, pos: int, out: list[str]) -> int:
        pos = self._decoder.decode(text, pos, out)
        if self._decoder.closed:
            # The stream never changes what it emitted, so a later duplicate key is ignored.
            self.complete = True
            self._handler = self._finished
        return pos

    def _skipped_string(self, text: str, pos: int, out: list[str]) -> int:
        if self._skip_escape:
            self._skip_escape = False
            pos += 1
        end = len(text)
        while pos < end:
            match = _STRING_END_OR_ESCAPE.search(text, pos)
            if match is None:
                return end
            pos = match.end()
            if match.group() == '"':
                self._handler = self._nested if self._depth else self._after_value
                return pos
            if pos == end:
                self._skip_escape = True
                return end
            pos += 1
        return pos

    def _nested(self, text: str, pos: int, out: list[str]) -> int:
        end = len(text)
        while pos < end:
            match = _NESTED_SYNTAX.search(text, pos)
            if match is None:
                return end
            pos = match.end()
            char = match.group()
            if char == '"':
                self._skip_escape = False
                self._handler = self._skipped_string
                return pos
            if char in "{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    self._handler = self._after_value
                    return pos
        return pos

    def _scalar(self, text: str, pos: int, out: list[str]) -> int:
        match = _SCALAR_END.search(text, pos)
        if match is None:
            return len(text)
        self._handler = self._expect_key if match.group() == "," else self._finished
        return match.end()

    def _after_value(self, text: str, pos: int, out: list[str]) -> int:
        pos = _skip_whitespace(text, pos)
        if pos == len(text):
            return pos
        self._handler = self._expect_key if text[pos] == "," else self._finished
        return pos + 1

    def _finished(self, text: str, pos: int, out: list[str]) -> int:
        return len(text)


def _skip_whitespace(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return pos if match is None else match.end()

"""Another line put into a speaking call's argument text, every other character as written.

A local server's prompt cache matches a prompt character for character as a prefix: arguments
written out again by `json.dumps` (other spacing, escapes or key order) would miss it from the
first rewritten message on. Here only the line's string value changes, and each character of
the new line that the model wrote in its own line keeps the form the model gave it (`\\u00e9`
or `é`, `\\/` or `/`), so the words a line kept are the bytes the model generated.
"""

from __future__ import annotations

import json
import re
from typing import Final

_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_STRING_PART: Final = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|.",
    re.DOTALL,
)
"""One character of a JSON string's body as written: a surrogate pair's two escapes (one
character once decoded), another escape, or the character itself."""
_DECODER: Final = json.JSONDecoder()


def with_line(arguments: str, line: str, field: str = "line") -> str | None:
    """`arguments` with `line` as the string value of its top-level `field`; None when the
    text is not one JSON object holding `field` exactly once, as a string."""
    try:
        span = _value_span(arguments, field)
    except (ValueError, RecursionError):
        return None
    if span is None:
        return None
    start, end = span
    written = _written_forms(arguments[start + 1 : end - 1])
    return f'{arguments[:start]}"{_encoded(line, written)}"{arguments[end:]}'


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return pos if match is None else match.end()


def _value_span(text: str, field: str) -> tuple[int, int] | None:
    """Where the value of top-level `field` lies in `text`, quotes included. Raises ValueError
    where `json.loads` would; None for an object it reads differently from the one expected:
    `field` missing, not a string, or given twice (`json.loads` keeps the last, and the first
    would still say what the player did not hear)."""
    pos = _skip(text, 0)
    if not text.startswith("{", pos):
        return None
    pos = _skip(text, pos + 1)
    span: tuple[int, int] | None = None
    found = False
    if text.startswith("}", pos):
        return None
    while True:
        if not text.startswith('"', pos):
            return None
        key: object
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            return None
        start = _skip(text, pos + 1)
        value: object
        value, pos = _DECODER.raw_decode(text, start)
        if key == field:
            if found or not isinstance(value, str):
                return None
            found = True
            span = (start, pos)
        pos = _skip(text, pos)
        if text.startswith("}", pos):
            break
        if not text.startswith(",", pos):
            return None
        pos = _skip(text, pos + 1)
    return span if _skip(text, pos + 1) == len(text) else None


def _written_forms(body: str) -> dict[str, str]:
    """Each character of a JSON string's `body` -> how it was first written there."""
    forms: dict[str, str] = {}
    for part in _STRING_PART.finditer(body):
        written = part.group()
        char: str = json.loads(f'"{written}"') if written.startswith("\\") else written
        forms.setdefault(char, written)
    return forms


def _encoded(line: str, written: dict[str, str]) -> str:
    """`line` as a JSON string's body: a character as the model wrote it, else as `json.dumps`
    does, in ASCII when the model escaped what is not ASCII and wrote none of it as is."""
    ascii_only = all(form.isascii() for form in written.values()) and not all(
        char.isascii() for char in written
    )
    out: list[str] = []
    for char in line:
        form = written.get(char)
        if form is None:
            # A lone surrogate is always escaped: unescaped, it could not be sent as UTF-8.
            escape = ascii_only or "\ud800" <= char <= "\udfff"
            form = written[char] = json.dumps(char, ensure_ascii=escape)[1:-1]
        out.append(form)
    return "".join(out)

"""HTML entities out of what an NPC says, before anything is shown or scored.

Some servers' chat templates HTML-escape the conversation (`I'm` reaches the model as
`I&#39;m`), and a small model copies the entities into its answer; escaped twice, it writes
`I&amp;#39;m`.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from typing import Final

from ..speech import FinalSpeech, SpokenOption

_LONGEST_ENTITY: Final = 10
"""`&#x1F600;` and the longest named entities a model copies fit in this many characters."""
_DEPTH: Final = 2
"""How many times a line may be escaped: one pass per template that escapes the conversation."""
_PARTIAL = re.compile(r"&(#[0-9]{0,7}|#[xX][0-9a-fA-F]{0,6}|[A-Za-z][A-Za-z0-9]{0,8})?$")
# A quoted word glued to the next (`"action"sell_passage`) is a key whose colon the model lost.
_CALL_TEXT = re.compile(
    r'^\s*(?:[{\[]|functions\.|<tool_call>|\w+\s*\(\s*\{|"\w+"\w)|"\w+"\s*:\s*[\[{"]'
)


def decode_entities(text: str) -> str:
    """`text` with HTML character references decoded (`&#39;` and `&amp;#39;` are `'`)."""
    for _ in range(_DEPTH):
        if "&" not in text:
            break
        text = html.unescape(text)
    return text


def _decode_once(text: str) -> str:
    return html.unescape(text) if "&" in text else text


def decode_speech(final: FinalSpeech) -> FinalSpeech:
    """A completed line and its option labels, decoded."""
    options = tuple(
        SpokenOption(option.id, decode_entities(option.label)) for option in final.options
    )
    return replace(final, line=decode_entities(final.line), options=options)


def looks_like_arguments(text: str) -> bool:
    """Whether plain text is call syntax (JSON, `functions.x:`) rather than something said."""
    return bool(_CALL_TEXT.search(text))


def entity_safe_end(text: str, end: int) -> int:
    """Where `text[:end]` may be cut without splitting a character reference (at any pass)."""
    cut = text.rfind("&", 0, end)
    if cut < 0 or end - cut > _DEPTH * _LONGEST_ENTITY:
        return end
    tail = text[cut:end]
    for _ in range(_DEPTH):
        if len(tail) <= _LONGEST_ENTITY and _PARTIAL.match(tail):
            return cut
        tail = _decode_once(tail)
    return end


class EntityStream:
    """Decodes entities in streamed text, holding back a reference cut between fragments.

    One holding decoder per escaping pass: what the first pass completes (`&amp;` into `&`)
    may be the start of a reference for the second (`&#39;`).
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = [""] * _DEPTH

    def feed(self, text: str) -> str:
        """The decoded text that is certain now; a trailing partial reference waits."""
        for level in range(_DEPTH):
            text = self._held[level] + text
            self._held[level] = ""
            cut = text.rfind("&")
            if cut >= 0 and len(text) - cut <= _LONGEST_ENTITY and _PARTIAL.match(text, cut):
                self._held[level] = text[cut:]
                text = text[:cut]
            text = _decode_once(text)
        return text

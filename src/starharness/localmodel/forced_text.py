"""What of the text a grammar forces is evaluated in one batch (see `jump_forward`).

Pure text: nothing here imports llama.cpp.
"""

from __future__ import annotations

import re
from typing import Final

_OPTIONAL_SPACE: Final = re.compile(r'^space ::= (?:" "\?|\| " ")$', re.MULTILINE)
"""llama.cpp's JSON Schema converter's rule for the space it allows between JSON tokens."""
_CLOSED: Final = re.compile(r"^.*(?:[^\w\s]|_){2}", re.DOTALL)
"""The longest prefix that ends with two characters of punctuation (neither a letter, a
digit nor a space; `_` is punctuation to a tokenizer): it ends at the end of that run."""


def compact(gbnf: str) -> str:
    """`gbnf`, a grammar from llama.cpp's JSON Schema converter, without the optional space
    between JSON tokens: the same JSON, written compact, as the model writes it anyway.

    With the space allowed nothing after a comma or a colon is forced (a space may come
    first), so a forced `",` ended where the model reads `","` as one token, and on the 1.5B
    development model that steered its next choice to `"name", "arguments" : {`."""
    return _OPTIONAL_SPACE.sub('space ::= ""', gbnf)


def batched_text(forced: bytes, *, ends: bool) -> bytes:
    """The part of `forced`, the text a grammar allows next and nothing else, to evaluate
    in one batch: without a UTF-8 character cut at its end, and, unless nothing but the end
    of the answer follows, cut where the model's own tokens would be cut too.

    Byte-level tokenizers (Qwen's, SmolLM2's, GPT's) first split text into words, numbers
    and runs of punctuation, and a word may begin with one punctuation character: `_sells`,
    `-shortcut`, `"intel`. Forced text that ends in the middle of such a piece hands the
    model a boundary it rarely read: after `player` the grammar forces `_` (player_buys or
    player_sells), and `_` evaluated alone turned the 1.5B model's `player_sells` into
    `player_buys`; SmolLM2 chose another intel after a forced `intel-`. A run of two
    punctuation characters or more (`":"`, `","`, `":`) ends a piece whatever follows it
    but more punctuation, so forced text is cut after the last such run and the model writes
    the rest with its own choice, as it would have."""
    whole = _whole_characters(forced)
    if ends:
        return whole
    closed = _CLOSED.match(whole.decode("utf-8"))
    return b"" if closed is None else closed.group(0).encode("utf-8")


def _whole_characters(text: bytes) -> bytes:
    """`text` without a UTF-8 character cut at its end."""
    for cut in range(len(text), max(len(text) - 4, -1), -1):
        try:
            text[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return text[:cut]
    return b""

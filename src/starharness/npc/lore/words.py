"""A player's line as search words: whatever they typed, never full-text query syntax.

FTS5 MATCH and PostgreSQL's tsquery parsers both have operators (quotes, AND/OR/NOT, NEAR,
`*`, `^`, `-`, parentheses, column filters); a line is cut to plain words first, and each
word is then quoted (FTS5) or joined with `or` (websearch_to_tsquery), so no input is syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+")
"""Letters and digits of any script; `_` and punctuation separate words, as in the indexes."""


def search_words(
    text: str, stopwords: Iterable[str] | frozenset[str], limit: int
) -> tuple[str, ...]:
    """The distinct words of `text` worth searching for, in order, at most `limit`."""
    stop = stopwords if isinstance(stopwords, frozenset) else frozenset(stopwords)
    found: list[str] = []
    for match in _WORD.finditer(text.casefold()):
        word = match.group()
        if word in stop or (len(word) < 2 and not word.isdigit()) or word in found:
            continue
        found.append(word)
        if len(found) >= limit:
            break
    return tuple(found)


def fts5_match(words: Iterable[str], every: bool = False) -> str:
    """An FTS5 MATCH expression: any of the words (`every`: all of them), each a quoted string
    (never an operator)."""
    joint = " AND " if every else " OR "
    return joint.join('"' + word.replace('"', '""') + '"' for word in words)


def websearch_text(words: Iterable[str], every: bool = False) -> str:
    """Text for `websearch_to_tsquery`: any of the words (`every`: all of them); a bare `or`
    would be the operator, so it is left out."""
    return (" " if every else " or ").join(word for word in words if word != "or")

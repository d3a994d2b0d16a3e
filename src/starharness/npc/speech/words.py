"""Words of a line, compared as a listener hears them: case, punctuation and thousands
separators aside. Shared by the speech contract (an option that only copies the NPC's line is
dropped) and the eval's rules (echoes and copied options are judged the same way)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

MIN_COPIED_WORDS: Final = 4
"""Fewer words than this in common is ordinary talk ("yes", "how much"), not a copy."""


def plain_words(text: str) -> list[str]:
    """Lower-case words with thousands separators and punctuation gone ("1,000" is "1000")."""
    flat = text.casefold().replace("\u2019", "'")
    flat = re.sub(r"(?<=\d),(?=\d{3})", "", flat)
    return re.findall(r"[a-z0-9']+", flat)


def longest_run(wanted: Sequence[str], heard: Sequence[str]) -> int:
    """The longest run of consecutive words of `wanted` that `heard` holds in the same order."""
    best = 0
    previous = [0] * (len(heard) + 1)
    for word in wanted:
        current = [0] * (len(heard) + 1)
        for j, other in enumerate(heard, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def copies(label: str, line: str) -> bool:
    """Whether `label` is nothing but a stretch of `line` (at least `MIN_COPIED_WORDS` words)."""
    words = plain_words(label)
    return len(words) >= MIN_COPIED_WORDS and longest_run(words, plain_words(line)) == len(words)

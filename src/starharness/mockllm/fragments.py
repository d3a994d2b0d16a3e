"""Cutting text into streamed pieces, anywhere (inside escapes and between surrogates too)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable


def split_every(text: str, size: int) -> list[str]:
    """Cut `text` into pieces of `size` code points (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"fragment size must be at least 1, got {size}")
    return [text[start : start + size] for start in range(0, len(text), size)]


def split_at(text: str, offsets: Iterable[int]) -> list[str]:
    """Cut `text` at the given code-point offsets; out-of-range and repeated offsets are ignored."""
    cuts = sorted({offset for offset in offsets if 0 < offset < len(text)})
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]

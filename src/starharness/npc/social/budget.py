"""How many tokens a text costs a small model, estimated without a tokenizer, and whether a
memory is worth more than trivia.

No tokenizer is downloaded: the estimate counts words, numbers and punctuation marks (each at
least one token in every BPE vocabulary we know) and never less than one token per four
characters, so it errs high for English and a text it says fits does fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PIECES = re.compile(r"\w+|[^\w\s]")

TRIVIA = 10
"""Importance at or below this is trivia (a visit where nothing happened): folded first."""
NOTABLE = 30
"""Worth passing on and quoting (an opinion, a note)."""
IMPORTANT = 60
"""Money, a betrayal, a job: quoted before anything less, and never dropped from a summary."""
MOST = 100


def estimate_tokens(text: str) -> int:
    """Tokens `text` costs, erring high: words, numbers and marks, at least len/4."""
    return max(len(_PIECES.findall(text)), -(-len(text) // 4))


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """Room, in estimated tokens, for what an NPC remembers of one player."""

    tokens: int = 200

    def __post_init__(self) -> None:
        if self.tokens < 16:
            raise ValueError(f"a memory budget needs at least 16 tokens, got {self.tokens}")

    def fits(self, text: str) -> bool:
        return estimate_tokens(text) <= self.tokens


def is_trivia(importance: int) -> bool:
    return importance <= TRIVIA


def check_importance(importance: int) -> int:
    """`importance` when it is within 0..MOST, else a ValueError naming it."""
    if not 0 <= importance <= MOST:
        raise ValueError(f"importance must be between 0 and {MOST}, got {importance}")
    return importance

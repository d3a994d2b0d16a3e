"""Which saved prompt states a newer one makes redundant, for the model server's state cache.

llama-cpp-python's server (`--cache`) saves the model's state after every completion, keyed by
the tokens it holds (prompt and answer), and restores the saved state that shares the longest
prefix with a new prompt. For the 1.5B development model a state is 50-90 MB (its attention
cache for 2,000-3,000 tokens), and an NPC's turn saves two (its decision, then its speech):
in a 1 GiB cache the oldest states go after a few turns, and with them the NPC prefixes warmed
at start. A greeting to an NPC whose prefix was dropped evaluates about 2,000 tokens again (18 s
measured in the 1.5B eval, against 0.8 s for one still warm).

Most of those states are redundant: a conversation's turn extends its previous turn, so the
newest state holds almost every token of the ones before it. A saved state is dropped when all
but at most `slack` of its tokens begin the newer key: any prompt then shares at least as long a
prefix with the newer key as with the dropped one, less at most `slack` tokens (a decision's few
answer tokens, where the speech request that followed went another way). What stays is about
one state per conversation and one per NPC prefix nobody has talked to yet.

Pure token arithmetic: nothing here imports llama.cpp.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

SLACK_TOKENS: Final = 48
"""Tokens of reuse a dropped state may take with it: a decision's call and answer (about 20)
where the speech request opened differently, or a warmed prefix's generation prompt (about
15) where the greeting's user message began. At 20-60 prompt tokens/s on two cores, at most a
second or two on a path that is rare, against 20-40 s for a prefix evicted."""


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens `a` and `b` begin with in common."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def superseded(
    keys: Iterable[Sequence[int]], newer: Sequence[int], slack: int = SLACK_TOKENS
) -> list[Sequence[int]]:
    """The keys in `keys` a state saved under `newer` makes redundant (never `newer` itself):
    those whose tokens, all but at most `slack` of them, begin `newer`."""
    if slack < 0:
        raise ValueError(f"slack must be 0 or more, got {slack}")
    found: list[Sequence[int]] = []
    for key in keys:
        if len(key) - slack > len(newer) or key == newer:
            continue
        if len(key) - shared_prefix(key, newer) <= slack:
            found.append(key)
    return found

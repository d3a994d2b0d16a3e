"""Which prompt states the model server saves, restores and drops, for its state cache.

llama-cpp-python's server (`--cache`) saves the model's state after every completion, keyed by
the tokens it holds (prompt and answer), and restores the saved state that shares the longest
prefix with a new prompt. For the 1.5B development model a state is 50-90 MB (its attention
cache for 2,000-3,000 tokens) and saving one took 0.1-0.6 s on two cores: after a decision that
is time between the NPC's decision and its first word, spent on a state the very next request
(the speech, which continues the same prompt) never restores.

`serve-local` saves a state only when a request is about to overwrite it (`plan_move`): the
live context goes to the cache when the new prompt would lose more than `slack` of its tokens
and no saved state holds it already, and a saved state comes back when it shares more of the
prompt than the live context. One NPC's conversation saves nothing; a switch to another NPC
saves one state and restores one.

A saved state is dropped when a newer one makes it redundant (`superseded`): when all but at
most `slack` of its tokens begin the newer key, any prompt then shares at least as long a
prefix with the newer key as with the dropped one, less at most `slack` tokens. What stays is
about one state per conversation and one per NPC prefix nobody has talked to yet, so the NPC
prefixes warmed at start outlive a long conversation (a greeting to an NPC whose prefix was
evicted evaluated about 2,000 tokens again: 18 s in the 1.5B eval, against 0.8 s warm).

Pure token arithmetic: nothing here imports llama.cpp.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class StateMove:
    """What the server does with its states before it evaluates a prompt."""

    save_live: bool
    """Save the live context first: the prompt would lose more than the slack of it, and no
    saved state holds it."""
    restore: tuple[int, ...] | None
    """The saved key to load (it shares more of the prompt than the live context), or None."""


def plan_move(
    live: Sequence[int],
    saved: Iterable[Sequence[int]],
    prompt: Sequence[int],
    slack: int = SLACK_TOKENS,
) -> StateMove:
    """The move before `prompt` is evaluated, with `live` the tokens the model holds now and
    `saved` the keys of the saved states."""
    if slack < 0:
        raise ValueError(f"slack must be 0 or more, got {slack}")
    keys = [tuple(key) for key in saved]
    restore: tuple[int, ...] | None = None
    best = shared_prefix(live, prompt)
    for key in keys:
        shared = shared_prefix(key, prompt)
        if shared > best:
            restore, best = key, shared
    # What the live context keeps after the move: the prompt's prefix of it, or what the
    # restored state has of it.
    kept = shared_prefix(live, prompt if restore is None else restore)
    if len(live) - kept <= slack:
        return StateMove(save_live=False, restore=restore)
    # Only now, on a switch: whether a saved state already holds the live context.
    held = any(superseded([live], key, slack) or tuple(live) == key for key in keys)
    return StateMove(save_live=not held, restore=restore)

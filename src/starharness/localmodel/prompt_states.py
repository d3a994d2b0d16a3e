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

A prompt is tokenized to match what the model holds where the text is the same (`respelled`):
the tokens a model samples are not always the ones its tokenizer would cut the same text into
(`":[` then `{"` where the tokenizer reads `":[{"`), and the next request's history, tokenized
afresh, then parts from the saved state at that token and evaluates the rest of the NPC's last
line again (57 tokens, about 1.2 s on two cores, on one turn in six of the bench).

A saved state's bytes go into a buffer a dropped state left behind when one fits
(`reusable_buffer`); a new buffer gets room to grow (`buffer_size`). Writing 68 MB into fresh
memory took 0.29-0.6 s on two cores (the pages are faulted in and zeroed first), into a buffer
already written 0.013 s; a save sits between a switched NPC's request and its first word.

Pure token and byte arithmetic: nothing here imports llama.cpp.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

GROWTH_SHARE: Final = 4
"""A new state buffer holds its state and a quarter more: a conversation's state grows by a
turn's 100-300 tokens (3-8 MB of the 1.5B model's 28 KB a token), so the buffer its older state
leaves behind takes its next states for several turns."""

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


def buffer_size(state_bytes: int) -> int:
    """The size of a new buffer for a state of `state_bytes`: room for it to grow."""
    if state_bytes < 0:
        raise ValueError(f"a state has 0 bytes or more, got {state_bytes}")
    return state_bytes + state_bytes // GROWTH_SHARE


def reusable_buffer(sizes: Sequence[int], state_bytes: int) -> int | None:
    """The index in `sizes` (the spare buffers' sizes) of the smallest that holds
    `state_bytes`, or None when none does (the first of equal sizes)."""
    best: int | None = None
    for index, size in enumerate(sizes):
        if size >= state_bytes and (best is None or size < sizes[best]):
            best = index
    return best


def respelled(
    canonical: Sequence[int],
    held: Sequence[int],
    piece: Callable[[int], bytes],
    *,
    lead: int = 0,
) -> list[int] | None:
    """`canonical` (a prompt as the tokenizer cuts it) begun with the tokens of `held` (a
    context the model holds) that spell the same bytes, or None when they spell no more of it
    than the tokens the two share.

    `held`'s tokens are taken up to the last point where they and `canonical`'s end at the
    same byte, and no further than a UTF-8 character's start, so the rest is `canonical`'s own
    tokens, each spelling the text it did. `piece` gives a token's bytes (a control token's
    must be bytes no text spells); the first `lead` tokens (a beginning-of-text token) spell
    nothing and must be the same in both."""
    if lead < 0 or list(held[:lead]) != list(canonical[:lead]):
        return None
    shared = shared_prefix(canonical, held)
    if shared == len(held) or shared == len(canonical):
        return None  # nothing past what the tokens share
    # `canonical`'s bytes, spelled only as far as `held` is compared (a context that parts
    # early costs little), and where each of its tokens ends.
    text = bytearray()
    ends: dict[int, int] = {0: lead}
    spelled = lead

    def spell(upto: int) -> None:
        nonlocal spelled
        while len(text) < upto and spelled < len(canonical):
            text.extend(piece(canonical[spelled]))
            spelled += 1
            ends[len(text)] = spelled

    offset = 0
    best: tuple[int, int] | None = None
    for index in range(lead, len(held)):
        chunk = piece(held[index])
        spell(offset + len(chunk) + 1)  # a byte past it: is the cut at a character's start?
        if not text.startswith(chunk, offset):
            break
        offset += len(chunk)
        at = ends.get(offset)
        if at is not None and (offset == len(text) or text[offset] & 0xC0 != 0x80):
            best = (index + 1, at)
    if best is None or best[0] <= shared:
        return None
    taken, rest = best
    return [*held[:taken], *canonical[rest:]]

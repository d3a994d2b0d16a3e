"""The model server's saved prompt states and the tokens a prompt is evaluated as.

`StateShelf` keeps llama.cpp's states for the conversations not in the context now (which to
save, restore and drop: `prompt_states`); `prompt_tokens` cuts a rendered prompt into tokens,
only the template's markers as control tokens, begun with what the model holds where it
spells the same text; `lookahead_after_answer` says what the context most likely continues
with after an answer. Only the model server's child process imports this module: it imports
llama_cpp.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import llama_cpp
from llama_cpp import Llama, LlamaRAMCache

from .chat_prompt import PromptPart
from .prompt_states import (
    buffer_size,
    plan_move,
    respelled,
    reusable_buffer,
    shared_prefix,
    superseded,
)


@dataclass(frozen=True, slots=True)
class _SavedState:
    """The model's state as llama.cpp serializes it (its attention cache and last logits):
    the first `size` bytes of `data`."""

    data: ctypes.Array[ctypes.c_uint8]
    size: int


_MAX_SPARE: Final = 2
"""Buffers of dropped states kept for the next saves: a switch between two conversations
drops one state (the saving conversation's older one) and saves one."""


class StateShelf:
    """The server's state cache, run by this handler instead of by `Llama.create_completion`:
    a state is saved when a request is about to overwrite it, not after every completion (see
    `prompt_states.plan_move`), and a state a newer one makes redundant is dropped, so warmed
    NPC prefixes outlive a long conversation instead of being the first states evicted. With
    `verbose`, the log says each save and restore and what it cost.

    A state is llama.cpp's own bytes, saved and restored through its state API, not
    `Llama.save_state`: that one also copies `batch x vocabulary` floats of logits nothing
    reads here (74 MiB with a 150k vocabulary, not counted in the cache's budget) and copies
    the model state three times. A dropped state's buffer is kept for the next save
    (`prompt_states.reusable_buffer`), and a new one is mapped in whole (`_new_buffer`): on
    two cores, a 68 MB state written into fresh memory took 0.29-0.9 s, into a kept buffer
    0.013 s. Every turn of one NPC after another's pays one save and one restore (0.04 s)
    before the NPC's first word. The budget counts every
    buffer held, spare ones included, at its size."""

    def __init__(self, capacity_bytes: int, *, verbose: bool) -> None:
        self._capacity = capacity_bytes
        self._states: OrderedDict[tuple[int, ...], _SavedState] = OrderedDict()
        self._spare: list[ctypes.Array[ctypes.c_uint8]] = []
        self._bytes = 0
        self._verbose = verbose

    def keys(self) -> list[tuple[int, ...]]:
        """The saved states' tokens, most recently used last."""
        return list(self._states)

    def before(self, llama: Llama, tokens: Sequence[int]) -> None:
        """Save the live context or restore a saved one, as the prompt `tokens` needs."""
        live = _live(llama)
        move = plan_move(live, self._states, tokens)
        # Taken before the save, which may drop it from the cache as redundant (its buffer is
        # not written until it is loaded).
        restored = None if move.restore is None else self._states[move.restore]
        if move.save_live:
            started = time.perf_counter()
            dropped, kept = self._save(llama, tuple(live), busy=restored)
            self._say(
                f"star-harness state cache: {len(self._states)} states, "
                f"{self._bytes / 2**20:.0f} MiB; {dropped} superseded "
                f"(saved {len(live)} tokens in {time.perf_counter() - started:.2f} s, "
                f"{'into a kept buffer' if kept else 'into a new buffer'})"
            )
        if move.restore is not None and restored is not None:
            started = time.perf_counter()
            if move.restore in self._states:
                self._states.move_to_end(move.restore)
            self._load(llama, move.restore, restored, whole_prompt=len(tokens) == len(move.restore))
            self._say(
                f"star-harness state restored: {len(move.restore)} tokens "
                f"in {time.perf_counter() - started:.2f} s"
            )

    def prepare(self, llama: Llama) -> None:
        """Map in a buffer for the next save while the server waits, when no kept one would
        hold the live state and the budget has room for it without dropping a saved state: in
        the model server's process a new buffer took 0.26-0.67 s on two cores, paid before the
        first word of the turn that saved into it."""
        size = llama_cpp.llama_state_get_size(llama.ctx)
        if reusable_buffer([len(data) for data in self._spare], size) is not None:
            return
        wanted = buffer_size(size)
        if len(self._spare) >= _MAX_SPARE or self._bytes + wanted > self._capacity:
            return
        started = time.perf_counter()
        self._spare.append(_new_buffer(wanted))
        self._spare.sort(key=len, reverse=True)
        self._bytes += wanted
        self._say(
            f"star-harness state cache: a buffer of {wanted / 2**20:.0f} MiB mapped in while "
            f"idle, in {time.perf_counter() - started:.2f} s"
        )

    def _save(
        self, llama: Llama, key: tuple[int, ...], *, busy: _SavedState | None
    ) -> tuple[int, bool]:
        """Save the live state under `key`: how many saved states it made redundant, and
        whether it went into a kept buffer. `busy`'s buffer is not written."""
        size = llama_cpp.llama_state_get_size(llama.ctx)
        dropped = superseded(list(self._states), key)
        for old in dropped:
            self._drop(self._states.pop(tuple(old)).data, busy)
        free = [index for index, data in enumerate(self._spare) if not _same(data, busy)]
        index = reusable_buffer([len(self._spare[i]) for i in free], size)
        if index is None:
            data = _new_buffer(buffer_size(size))
            self._bytes += len(data)
        else:
            data = self._spare.pop(free[index])
        written = llama_cpp.llama_state_get_data(llama.ctx, data, len(data))
        if written > len(data):
            raise RuntimeError(f"llama.cpp wrote {written} bytes of state into {len(data)}")
        self._states[key] = _SavedState(data, written)
        while self._bytes > self._capacity and (self._spare or self._states):
            if self._spare:
                self._bytes -= len(self._spare.pop(0))
            else:
                _, evicted = self._states.popitem(last=False)
                self._bytes -= len(evicted.data)
        return len(dropped), index is not None

    def _drop(self, data: ctypes.Array[ctypes.c_uint8], busy: _SavedState | None) -> None:
        """Keep a dropped state's buffer for a later save, the largest `_MAX_SPARE` of them;
        `busy`'s (to be loaded still) is kept but not written by this save."""
        self._spare.append(data)
        self._spare.sort(key=len, reverse=True)
        while len(self._spare) > _MAX_SPARE:
            extra = next(
                (i for i in reversed(range(len(self._spare))) if not _same(self._spare[i], busy)),
                len(self._spare) - 1,
            )
            self._bytes -= len(self._spare.pop(extra))

    @staticmethod
    def _load(
        llama: Llama, key: tuple[int, ...], state: _SavedState, *, whole_prompt: bool
    ) -> None:
        if llama_cpp.llama_state_set_data(llama.ctx, state.data, state.size) != state.size:
            raise RuntimeError("llama.cpp refused a saved state")
        # A prompt that is exactly the saved tokens would be answered from the restored
        # logits without a decode (`Llama.load_state` marks them stale for that reason, in a
        # private field); the last token is left to be evaluated again instead.
        held = len(key) - 1 if whole_prompt else len(key)
        llama.input_ids[:held] = key[:held]
        llama.n_tokens = held

    def _say(self, line: str) -> None:
        if self._verbose:
            print(line, file=sys.stderr)


def _live(llama: Llama) -> list[int]:
    # `input_ids` is the whole context's buffer; the first `n_tokens` are evaluated.
    return llama.input_ids[: llama.n_tokens].tolist()


def prompt_tokens(
    llama: Llama, prompt: Sequence[PromptPart], shelf: StateShelf | None
) -> list[int]:
    """`prompt`'s tokens as the completion evaluates them: as the tokenizer cuts it (with a
    beginning-of-text token where the model declares one, as `create_completion` does; only
    markers read as control tokens), begun instead with the tokens the live context or a saved
    state spells the same text with, where that leaves the fewest tokens to evaluate
    (`prompt_states.respelled`)."""
    canonical = llama.tokenize(b"", add_bos=True, special=True)
    lead = len(canonical)
    text = ""  # neighbouring text parts are cut as one run, as the tokenizer cuts a string
    for part in [*prompt, PromptPart("", marker=True)]:
        if not part.marker:
            text += part.text
            continue
        if text:
            canonical += llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            text = ""
        if part.text:
            canonical += llama.tokenize(part.text.encode("utf-8"), add_bos=False, special=True)
    candidates = [_live(llama), *(shelf.keys() if shelf is not None else ())]
    # What is left to evaluate: a respelling must leave less than the tokenizer's cut leaves
    # after the context that shares most of it.
    best = canonical
    left = len(canonical) - max(shared_prefix(canonical, held) for held in candidates)
    piece = _piece_reader(llama)
    for held in candidates:
        found = respelled(canonical, held, piece, lead=lead)
        if found is None:
            continue
        found_left = len(found) - shared_prefix(found, held)
        if found_left < left:
            best, left = found, found_left
    return best


@dataclass(frozen=True, slots=True)
class Lookahead:
    """Tokens to evaluate after the context `held` while the server waits for a request: the
    end of an answer and the opening of the message most likely to follow it
    (`lookahead_after_answer`). The next request, rendered in full, begins with them where the
    guess was right (`prompt_tokens` reuses them like any held tokens) and evaluates the rest
    as it would have anyway."""

    held: tuple[int, ...]
    tokens: tuple[int, ...]

    def run(self, llama: Llama) -> None:
        """Evaluate the tokens, unless the context changed since (another request ran)."""
        if tuple(_live(llama)) != self.held or not self.tokens:
            return
        if len(self.held) + len(self.tokens) >= llama.n_ctx():
            return
        started = time.perf_counter()
        llama.eval(list(self.tokens))
        if llama.verbose:
            took = time.perf_counter() - started
            print(
                f"star-harness idle: evaluated {len(self.tokens)} tokens ahead of the "
                f"{len(self.held)} held (the answer's end, the next message's opening) "
                f"in {took:.2f} s",
                file=sys.stderr,
            )


def lookahead_after_answer(
    llama: Llama, prompt: Sequence[int], answer: str, then: Sequence[PromptPart]
) -> Lookahead | None:
    """What completes the context after an answer to `prompt` (`answer`: the text generated)
    and then `then`: the answer's end the context does not hold yet (the last token of an
    answer is sampled, not evaluated), then `then` cut as `prompt_tokens` cuts it. None when
    the context does not hold `prompt` and a beginning of the answer."""
    live = _live(llama)
    if not answer or live[: len(prompt)] != list(prompt):
        return None
    piece = _piece_reader(llama)
    held = b"".join(piece(token) for token in live[len(prompt) :])
    spelled = answer.encode("utf-8")
    if not spelled.startswith(held):
        return None
    tail = spelled[len(held) :]
    try:
        tail.decode("utf-8")  # a tail that begins inside a character is not cut as it would be
    except UnicodeDecodeError:
        return None
    tokens = llama.tokenize(tail, add_bos=False, special=False) if tail else []
    for part in then:
        tokens += llama.tokenize(part.text.encode("utf-8"), add_bos=False, special=part.marker)
    return Lookahead(tuple(live), tuple(tokens))


_PIECES: weakref.WeakKeyDictionary[Llama, dict[int, bytes]] = weakref.WeakKeyDictionary()


def _piece_reader(llama: Llama) -> Callable[[int], bytes]:
    """A token's bytes, remembered per model; a control token's are `0xFF` and its number,
    which no UTF-8 text spells, so text that spells `<|im_start|>` never matches one."""
    known = _PIECES.get(llama)
    if known is None:
        known = _PIECES[llama] = {}
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    if vocab is None:
        raise ValueError("the model has no vocabulary")

    def piece(token: int) -> bytes:
        found = known.get(token)
        if found is None and llama_cpp.llama_vocab_is_control(vocab, token):
            found = known[token] = b"\xff" + str(token).encode()
        if found is None:
            buffer = ctypes.create_string_buffer(64)
            size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, True)
            if size < 0:  # the piece is longer: llama.cpp says how long
                buffer = ctypes.create_string_buffer(-size)
                size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, True)
            if size < 0:
                raise ValueError(f"llama.cpp gives no piece for token {token}")
            found = known[token] = buffer.raw[:size]
        return found

    return piece


def _new_buffer(size: int) -> ctypes.Array[ctypes.c_uint8]:
    """`size` bytes for a state, mapped in by the kernel at once where it can (Linux's
    `MAP_POPULATE`). In the model server's process on two cores, a 70 MB `ctypes` array took
    0.62-0.73 s (its pages faulted in one by one as it was zeroed), a populated mapping
    0.016-0.021 s; either is then written in 0.013 s."""
    populate: int = getattr(mmap, "MAP_POPULATE", 0)
    anonymous: int = getattr(mmap, "MAP_ANONYMOUS", 0)
    if populate and anonymous:
        region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | anonymous | populate)
        return (ctypes.c_uint8 * size).from_buffer(region)
    return (ctypes.c_uint8 * size)()


def _same(data: ctypes.Array[ctypes.c_uint8], state: _SavedState | None) -> bool:
    return state is not None and data is state.data


_SHELVES: weakref.WeakKeyDictionary[Llama, StateShelf] = weakref.WeakKeyDictionary()


def shelf_of(llama: Llama) -> StateShelf | None:
    """The model's state shelf, taking over the server's plain RAM cache (`--cache_type ram`)
    on first use; None when the server keeps no states or keeps them on disk."""
    shelf = _SHELVES.get(llama)
    if shelf is None:
        cache = llama.cache
        if type(cache) is not LlamaRAMCache:
            return None
        shelf = _SHELVES[llama] = StateShelf(cache.capacity_bytes, verbose=llama.verbose)
        llama.set_cache(None)
    return shelf

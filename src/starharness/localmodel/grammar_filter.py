"""A grammar applied to the model's likely tokens first, as a logits processor.

llama-cpp-python puts a grammar in its sampler chain before everything else, so every
generated token checks the whole vocabulary against it: 151,936 tokens for Qwen. On two cores
with the 1.5B development model that took 60 ms a token instead of 37-40 (a JSON string, 40
tokens, greedy or sampled), a decision of about 22 tokens half a second longer before the
NPC's first word, and a 50-token line a second longer to finish.

llama.cpp's own tools check the token the model would pick first and check the vocabulary
only when the grammar refuses it. `GrammarFilter` does that through llama-cpp-python's public
`logits_processor` hook and llama.cpp's grammar sampler:

- **greedy** (temperature 0, a decision): the best token, if the grammar allows it, is what the
  grammar-bound chain would have picked too, so the answer is the same token for token;
- **sampled** (temperature above 0 with `top_k` between 1 and `MAX_TOP_K`, the speech): only
  the `top_k` best tokens are checked and the others masked, so the chain's top-k, top-p and
  min-p filters then choose among the allowed ones of those. The chain with the grammar first
  chooses among the `top_k` best *allowed* tokens; they differ only when some of the best
  `top_k` are refused, and then only in tokens top-p and min-p almost always drop.

The chain's repetition penalties come before its grammar, and they can change which token is
best: the filter takes them over (`sampling` says to turn the chain's off) and applies them
first, as llama.cpp does, to the tokens generated so far in the answer.

When none of the checked tokens is allowed the whole vocabulary is checked, as before. Every
token the model generated is checked again before the grammar advances over it: llama.cpp
aborts the process on a token its grammar cannot accept, so a token that got through anyway
ends the answer, and `broken` says why.

Only `llama_child` imports this module: it imports llama_cpp.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import llama_cpp
import numpy as np
import numpy.typing as npt
from llama_cpp import Llama

MAX_TOP_K: Final = 100
"""Sampling with a larger `top_k` (or none) keeps the grammar first in the chain: masking all
but the best few would change which tokens it samples from."""

_TOKEN_DATA: Final = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


@dataclass(frozen=True, slots=True)
class Forced:
    """What a grammar forces next: `text` (bytes), and whether it then allows only the end."""

    text: bytes
    ends: bool


def byte_tokens(llama: Llama) -> dict[int, int] | None:
    """A token of one byte, by token, for every byte value the model has one for: the probe
    `GrammarFilter.forced` steps with. None when one of `NEEDED_BYTES` has none, and then
    nothing is forced. A byte-level vocabulary has them (Qwen's has all 256; SmolLM2's lacks
    six control characters, the two bytes UTF-8 never uses and the lead bytes of planes 4 to
    16, which a JSON grammar forces nowhere)."""
    found = _BYTE_TOKENS.get(llama)
    if found is None:
        found = {}
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        if vocab is not None:
            piece = ctypes.create_string_buffer(8)
            seen: set[int] = set()
            for token in range(llama.n_vocab()):
                if llama_cpp.llama_vocab_is_control(vocab, token):
                    continue
                size = llama_cpp.llama_token_to_piece(vocab, token, piece, len(piece), 0, False)
                if size == 1 and piece.raw[0] not in seen:
                    seen.add(piece.raw[0])
                    found[token] = piece.raw[0]
        _BYTE_TOKENS[llama] = found
    return found if set(found.values()) >= NEEDED_BYTES else None


NEEDED_BYTES: Final = frozenset(
    [0x09, 0x0A, 0x0D, *range(0x20, 0x7F), *range(0x80, 0xC0), *range(0xC2, 0xF1)]
)
"""The bytes a probe for forced text must try: tab, newlines, printable ASCII, and UTF-8's
continuation bytes and the lead bytes up to plane 3 (emoji included)."""
_BYTE_TOKENS: weakref.WeakKeyDictionary[Llama, dict[int, int]] = weakref.WeakKeyDictionary()


class GrammarError(RuntimeError):
    """The grammar does not parse, or the model generated a token it refuses."""


class GrammarFilter:
    """One completion's grammar, as a logits processor (`create_completion(logits_processor=
    [filter])`); make a new one for every completion."""

    def __init__(
        self,
        llama: Llama,
        gbnf: str,
        *,
        top_k: int | None,
        penalties: tuple[float, float, float] = (1.0, 0.0, 0.0),
    ) -> None:
        """`top_k` None: the completion is greedy; else the sampler's `top_k`. `penalties`:
        the repeat, frequency and presence penalties the filter applies (see `sampling`)."""
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        if vocab is None:
            raise GrammarError("the model has no vocabulary")
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            raise GrammarError("llama.cpp could not parse the grammar (its log says where)")
        self._sampler = sampler
        weakref.finalize(self, llama_cpp.llama_sampler_free, sampler)
        self._top_k = top_k
        self._repeat, self._frequency, self._presence = penalties
        self._window = llama.last_n_tokens_size
        self._end = llama.token_eos()
        self._prompt: int | None = None
        self._seen = 0
        self.broken: str | None = None
        """Why the answer was ended early (a generated token the grammar refused), or None."""

    @classmethod
    def for_sampling(
        cls, llama: Llama, gbnf: str, sampling: dict[str, Any]
    ) -> GrammarFilter | None:
        """The filter for a completion with these sampling options, or None where it does not
        apply and the sampler chain keeps the grammar itself (mirostat, a negative
        temperature, `top_k` off or above `MAX_TOP_K`)."""
        if sampling.get("mirostat_mode"):
            return None
        penalties = (
            float(sampling.get("repeat_penalty", 1.0)),
            float(sampling.get("frequency_penalty", 0.0)),
            float(sampling.get("presence_penalty", 0.0)),
        )
        temperature = sampling.get("temperature", 0.8)
        if temperature == 0:
            return cls(llama, gbnf, top_k=None, penalties=penalties)
        top_k = sampling.get("top_k", 40)
        if temperature < 0 or not isinstance(top_k, int) or not 0 < top_k <= MAX_TOP_K:
            return None
        return cls(llama, gbnf, top_k=top_k, penalties=penalties)

    def sampling(self, sampling: dict[str, Any]) -> dict[str, Any]:
        """`sampling` for the completion this filter constrains: the filter in its logits
        processors, and the chain's penalties off (the filter applies them)."""
        given: list[Any] = list(sampling.get("logits_processor") or [])
        return {
            **sampling,
            "logits_processor": [*given, self],
            "repeat_penalty": 1.0,
            "frequency_penalty": 0.0,
            "presence_penalty": 0.0,
        }

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        if self.broken is not None:
            return self._only_end(scores)
        if self._prompt is None:
            self._prompt = self._seen = len(input_ids)  # the grammar starts after the prompt
        if not self.accept(input_ids[self._seen :].tolist()):
            return self._only_end(scores)
        self._penalize(input_ids[self._prompt :][-self._window :], scores)
        if self._top_k is None:
            best = np.array([int(np.argmax(scores))], dtype=np.intc)
            if self._allowed(best, scores[best])[0]:
                return scores  # greedy picks it, as the grammar-bound chain would
            return self._mask(np.arange(len(scores), dtype=np.intc), scores)
        count = min(self._top_k, len(scores))
        likely = np.argpartition(-scores, count - 1)[:count].astype(np.intc)
        return self._mask(likely, scores)

    def accept(self, tokens: Sequence[int]) -> bool:
        """Advance the grammar over `tokens`, the answer's next ones, each checked first; False,
        with `broken` saying why, at the first it refuses. Tokens the filter is called with
        after the ones accepted here are its own to accept."""
        for token in tokens:
            if not self._allowed(np.array([token], dtype=np.intc), np.zeros(1, np.single))[0]:
                self.broken = f"the model generated token {token}, which the grammar refuses"
                return False
            llama_cpp.llama_sampler_accept(self._sampler, token)
            self._seen += 1
        return True

    def forced(self, bytes_by_token: Mapping[int, int], limit: int) -> Forced:
        """The text the grammar allows next and nothing else, up to `limit` bytes, found byte
        by byte on a copy of the grammar: a byte is forced when it is the only one of
        `bytes_by_token` (see `byte_tokens`) the grammar allows
        and it does not allow the end yet."""
        probe = llama_cpp.llama_sampler_clone(self._sampler)
        if not probe:
            return Forced(b"", ends=False)
        try:
            candidates = np.array([*bytes_by_token, self._end], dtype=np.intc)
            forced = bytearray()
            while len(forced) < limit:
                allowed = candidates[
                    self._allowed(candidates, np.zeros(len(candidates), np.single), probe)
                ]
                if len(allowed) == 1 and allowed[0] == self._end:
                    return Forced(bytes(forced), ends=True)
                if len(allowed) != 1:
                    break
                forced.append(bytes_by_token[int(allowed[0])])
                llama_cpp.llama_sampler_accept(probe, int(allowed[0]))
            return Forced(bytes(forced), ends=False)
        finally:
            llama_cpp.llama_sampler_free(probe)

    def _penalize(self, generated: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> None:
        """llama.cpp's repetition penalties on `scores`, in place, for the `generated` tokens."""
        if len(generated) == 0 or (self._repeat, self._frequency, self._presence) == (1, 0, 0):
            return
        tokens, counts = np.unique(generated, return_counts=True)
        logits = scores[tokens]
        logits = np.where(logits <= 0, logits * self._repeat, logits / self._repeat)
        scores[tokens] = logits - counts * self._frequency - self._presence

    def _mask(
        self, candidates: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        """`scores` with every token but the allowed `candidates` at minus infinity (the whole
        vocabulary checked when none of `candidates` is allowed)."""
        allowed = candidates[self._allowed(candidates, scores[candidates])]
        if len(allowed) == 0 and len(candidates) < len(scores):
            everything = np.arange(len(scores), dtype=np.intc)
            allowed = everything[self._allowed(everything, scores)]
        if len(allowed) == 0:
            self.broken = "the grammar allows no token here"
            return self._only_end(scores)
        kept = scores[allowed]
        scores[:] = -math.inf
        scores[allowed] = kept
        return scores

    def _allowed(
        self,
        tokens: npt.NDArray[np.intc],
        logits: npt.NDArray[np.single],
        grammar: Any = None,
    ) -> npt.NDArray[np.bool_]:
        """Which of `tokens` (with their `logits`) the grammar (or the copy of it `grammar`)
        allows next; a token already at minus infinity is not allowed."""
        data = np.zeros(len(tokens), dtype=_TOKEN_DATA)
        data["id"] = tokens
        data["logit"] = logits
        pointer = data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data))
        array = llama_cpp.llama_token_data_array(
            data=pointer, size=len(tokens), selected=-1, sorted=False
        )
        # The binding declares an array pointer; byref passes one without a copy.
        sampler = self._sampler if grammar is None else grammar
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))  # pyright: ignore[reportArgumentType]
        # The grammar sets a refused token's logit to minus infinity, in place.
        return np.isfinite(data["logit"])

    def _only_end(self, scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        scores[:] = -math.inf
        scores[self._end] = 0.0
        return scores

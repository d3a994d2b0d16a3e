"""A greedy grammar-bound completion that evaluates the text its grammar forces in one batch.

A decision is greedy JSON under a grammar, and about two thirds of its tokens are fixed by
the grammar, not chosen: in `{"action":{"name":"player_buys","arguments":{"good_id":"parts",
"qty":1}}}` the model chooses the action, the good and the number, and the keys and
punctuation between them follow. llama-cpp-python's completion generates every token with
its own forward pass (on two cores with the 1.5B development model about 60 ms each), the
fixed ones included, and then one more for the end of the answer.

Here, after each token the model chooses, the grammar is asked what it forces next (see
`GrammarFilter.forced`); that text is tokenized and evaluated together with the chosen token,
in one batch, as prompt tokens are (about a third of the cost each), and when the grammar
allows nothing but the end, the answer ends without another pass. The answer is the
model's greedy choice at every point where it had one. This is "jump-forward" decoding as
SGLang names it, through llama-cpp-python's public `eval` and `tokenize` and llama.cpp's
logits.

Only `llama_child` imports this module: it imports llama_cpp.
"""

from __future__ import annotations

import codecs
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Final

import llama_cpp
import numpy as np
from llama_cpp import Llama

from .forced_text import batched_text
from .grammar_filter import GrammarFilter, byte_tokens
from .prompt_states import shared_prefix

_MAX_FORCED: Final = 256
"""Bytes forced in one step at most; the next step forces the rest."""


def applies(llama: Llama, sampling: dict[str, Any], stops: Sequence[str], end: str) -> bool:
    """Whether a completion with these sampling options can jump forward: greedy (the grammar
    filter applies the repetition penalties; top-k, top-p and the like do not change a greedy
    choice), with no logits processor or bias of the request's own, no stop string but the
    end of the answer, on a vocabulary with a token for every byte."""
    greedy = sampling.get("temperature") == 0 and not sampling.get("mirostat_mode")
    own = sampling.get("logits_processor") or sampling.get("logit_bias")
    return greedy and not own and list(stops) == [end] and byte_tokens(llama) is not None


def complete(
    llama: Llama,
    prompt: str | Sequence[int],
    grammar: GrammarFilter,
    *,
    max_tokens: int | None,
    model: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The completion of `prompt` (text, or its tokens) under `grammar` (greedy), as
    llama-cpp-python's streamed `create_completion` chunks: text as it is known, then one with
    the finish reason. The first chunk comes after the prompt is evaluated, as the server's
    own does."""
    bytes_by_token = byte_tokens(llama)
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    if bytes_by_token is None or vocab is None:
        raise ValueError("this model's vocabulary has no token for every byte")
    completion_id = f"cmpl-{uuid.uuid4()}"
    created = int(time.time())
    name = model if model is not None else llama.model_path

    def chunk(text: str, finish: str | None) -> dict[str, Any]:
        choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
        return {
            "id": completion_id,
            "object": "text_completion",
            "created": created,
            "model": name,
            "choices": [choice],
        }

    tokens = (
        llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if isinstance(prompt, str)
        else list(prompt)
    )
    if len(tokens) >= llama.n_ctx():
        raise ValueError(
            f"Requested tokens ({len(tokens)}) exceed context window of {llama.n_ctx()}"
        )
    _evaluate_prompt(llama, tokens)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    limit = max_tokens if max_tokens is not None and max_tokens > 0 else llama.n_ctx()
    limit = min(limit, llama.n_ctx() - len(tokens))
    generated = 0
    finish = "length"
    while generated < limit:
        token = _greedy(llama, grammar)
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            finish = "stop"
            break
        if not grammar.accept([token]):
            finish = "stop"  # the filter's `broken` says why; the caller reports it
            break
        generated += 1
        text = llama.detokenize([token])
        forced = grammar.forced(bytes_by_token, _MAX_FORCED)
        whole = batched_text(forced.text, ends=forced.ends)
        more: list[int] = []
        if whole:
            candidate = llama.tokenize(whole, add_bos=False, special=False)
            fits = len(candidate) <= limit - generated
            if fits and llama.detokenize(candidate) == whole:
                if not grammar.accept(candidate):
                    yield chunk(decoder.decode(text), None)
                    finish = "stop"  # as above
                    break
                more = candidate
                text += whole
                generated += len(more)
        yield chunk(decoder.decode(text), None)
        if forced.ends and (more or not whole):
            finish = "stop"  # nothing but the end is allowed: no pass to generate it
            break
        if generated >= limit:
            break
        step = [token, *more]
        llama.eval(step)
    tail = decoder.decode(b"", final=True)
    done = chunk(tail, finish)
    done["usage"] = {
        "prompt_tokens": len(tokens),
        "completion_tokens": generated,
        "total_tokens": len(tokens) + generated,
    }
    if llama.verbose:
        llama_cpp.llama_perf_context_print(llama.ctx)
    yield done


def _evaluate_prompt(llama: Llama, tokens: list[int]) -> None:
    """Evaluate what of `tokens` the context does not hold yet (at least the last token, for
    its logits), logging it as llama-cpp-python's own completion does."""
    held: list[int] = llama.input_ids[: llama.n_tokens].tolist()
    common = min(shared_prefix(held, tokens), len(tokens) - 1)
    if llama.verbose:
        print(
            f"Llama.generate: {common} prefix-match hit, "
            f"remaining {len(tokens) - common} prompt tokens to eval",
            file=sys.stderr,
        )
    llama_cpp.llama_perf_context_reset(llama.ctx)
    # `eval` drops the context's cache past `n_tokens` before it evaluates.
    llama.n_tokens = common
    llama.eval(tokens[common:])


def _greedy(llama: Llama, grammar: GrammarFilter) -> int:
    """The model's best next token that `grammar` allows (its repetition penalties applied).

    Chosen here from the context's last logits rather than by `Llama.sample`, which reuses
    the sampler chain the server's last completion left behind, with that completion's
    grammar in it."""
    logits = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
    scores = np.ctypeslib.as_array(logits, shape=(llama.n_vocab(),)).copy()
    return int(np.argmax(grammar(llama.input_ids[: llama.n_tokens], scores)))

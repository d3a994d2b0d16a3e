"""A prompt's tokens begin with what the model holds where that spells the same text: SmolLM2
in this process, holding a line cut into other tokens than its tokenizer would cut it."""

from __future__ import annotations

from typing import Any

from starharness.localmodel.prompt_states import shared_prefix

_HISTORY = "<|im_start|>user\nWhat does a fuel cell cost?<|im_end|>\n<|im_start|>assistant\n"
_LINE = '{"line":"Four hundred fifty credits, and not a credit less."}'
_NEXT = "<|im_end|>\n<|im_start|>user\nAnd two of them?<|im_end|>\n<|im_start|>assistant\n"


def _held(llama: Any) -> list[int]:
    """The history as the tokenizer cuts it, then the line one character a token, as a model
    sampling its own cut of a line can hold it; evaluated."""
    tokens = llama.tokenize(_HISTORY.encode(), add_bos=True, special=True)
    for char in _LINE:
        (token,) = llama.tokenize(char.encode(), add_bos=False, special=False)
        tokens.append(token)
    llama.reset()
    llama.eval(tokens)
    return tokens


def test_the_next_prompt_keeps_a_line_the_model_holds_in_its_own_tokens(llama: Any) -> None:
    from starharness.localmodel.llama_child import prompt_tokens

    held = _held(llama)
    prompt = _HISTORY + _LINE + _NEXT
    canonical = llama.tokenize(prompt.encode(), add_bos=True, special=True)
    assert shared_prefix(canonical, held) < len(held) - 20, "the tokenizer cuts the line otherwise"
    tokens = prompt_tokens(llama, prompt, None)
    assert tokens[: len(held)] == held
    assert llama.detokenize(tokens, special=True) == llama.detokenize(canonical, special=True)
    # The rest is the tokenizer's own cut, from the end of the line on.
    rest = llama.tokenize(_NEXT.encode(), add_bos=False, special=True)
    assert tokens[len(held) :] == rest


def test_held_tokens_are_kept_only_as_far_as_they_spell_the_prompt(llama: Any) -> None:
    from starharness.localmodel.llama_child import prompt_tokens

    held = _held(llama)
    history = len(llama.tokenize(_HISTORY.encode(), add_bos=True, special=True))
    # Parting right after the history: the tokenizer's cut, whole.
    other = _HISTORY + "Five hundred." + _NEXT
    canonical = llama.tokenize(other.encode(), add_bos=True, special=True)
    assert prompt_tokens(llama, other, None) == canonical
    # Parting inside the line: the held tokens as far as the texts go together.
    other = _HISTORY + '{"line":"Five hundred."}' + _NEXT
    tokens = prompt_tokens(llama, other, None)
    kept = shared_prefix(tokens, held)
    assert history < kept < len(held)
    canonical = llama.tokenize(other.encode(), add_bos=True, special=True)
    assert llama.detokenize(tokens, special=True) == llama.detokenize(canonical, special=True)

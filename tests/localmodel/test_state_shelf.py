"""The state shelf's work between turns, SmolLM2 in this process: a buffer mapped in while the
server is idle takes the next save, within the cache's budget; and the lookahead after an
answer is evaluated only onto the context it was computed from."""

from __future__ import annotations

from typing import Any

import pytest

from starharness.localmodel.chat_prompt import next_user_parts

_PROMPT = "<|im_start|>user\nWhat does a fuel cell cost?<|im_end|>\n<|im_start|>assistant\n"
_OTHER = "<|im_start|>user\nWho runs the dock office?<|im_end|>\n<|im_start|>assistant\n"


def _evaluated(llama: Any, text: str) -> list[int]:
    tokens = llama.tokenize(text.encode(), add_bos=True, special=True)
    llama.reset()
    llama.eval(tokens)
    return tokens


def test_a_buffer_mapped_in_while_idle_takes_the_next_save(
    llama: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from starharness.localmodel.state_shelf import StateShelf

    shelf = StateShelf(1 << 30, verbose=True)
    _evaluated(llama, _PROMPT * 8)
    shelf.prepare(llama)
    assert "a buffer of" in capsys.readouterr().err
    shelf.prepare(llama)  # the kept buffer holds the live state: no second one
    assert capsys.readouterr().err == ""
    other = llama.tokenize((_OTHER * 8).encode(), add_bos=True, special=True)
    shelf.before(llama, other)  # another conversation takes the model: the live one is saved
    assert "into a kept buffer" in capsys.readouterr().err


def test_a_buffer_is_mapped_in_only_where_the_budget_has_room(
    llama: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from starharness.localmodel.state_shelf import StateShelf

    shelf = StateShelf(1 << 10, verbose=True)  # less than any state
    _evaluated(llama, _PROMPT * 8)
    shelf.prepare(llama)
    assert capsys.readouterr().err == ""
    shelf.before(llama, llama.tokenize(_OTHER.encode(), add_bos=True, special=True))
    assert "into a new buffer" in capsys.readouterr().err


def test_a_lookahead_is_evaluated_only_onto_the_context_it_follows(llama: Any) -> None:
    from starharness.localmodel.state_shelf import lookahead_after_answer

    prompt = _evaluated(llama, _PROMPT)
    answer = "Four hundred fifty."
    generated = llama.tokenize(answer.encode(), add_bos=False, special=False)
    llama.eval(generated[:-1])  # the last token of an answer is sampled, not evaluated
    ahead = lookahead_after_answer(llama, prompt, answer, next_user_parts())
    assert ahead is not None
    held = len(prompt) + len(generated) - 1
    assert len(ahead.held) == held
    assert list(ahead.tokens[:1]) == generated[-1:]
    expected = llama.tokenize(
        (_PROMPT + answer + "<|im_end|>\n<|im_start|>user\n").encode(), add_bos=True, special=True
    )
    ahead.run(llama)
    assert llama.input_ids[: llama.n_tokens].tolist() == expected
    # Computed before another request changed the context: it does nothing.
    _evaluated(llama, _PROMPT)
    llama.eval(generated[:-1])
    stale = lookahead_after_answer(llama, prompt, answer, next_user_parts())
    assert stale is not None
    _evaluated(llama, _OTHER)
    before = llama.input_ids[: llama.n_tokens].tolist()
    stale.run(llama)
    assert llama.input_ids[: llama.n_tokens].tolist() == before
    # An answer the context does not hold the beginning of gets none.
    assert lookahead_after_answer(llama, prompt, answer, next_user_parts()) is None

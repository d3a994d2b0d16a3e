"""Jump-forward decoding: the text a grammar forces is evaluated in one batch with the token
the model chose before it. The shaping of that text (pure); then SmolLM2 in this process:
the same decisions as the grammar-bound chain's, in fewer forward passes, none at all for a
forced ending, and correct after the server's own completion ran."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from realmodel_support import require_real_model

from starharness.localmodel.call_opening import split_opening
from starharness.localmodel.forced_text import batched_text, compact
from starharness.npc.encounter import GameKit
from starharness.voyage import GAME


def _whole_prefix(data: bytes) -> bytes:
    return data[: len(data.decode("utf-8", errors="ignore").encode())]


@given(st.text(), st.integers(min_value=0, max_value=400))
def test_forced_text_is_cut_to_whole_characters(text: str, cut: int) -> None:
    data = text.encode()[:cut]
    batched = batched_text(data, ends=True)
    batched.decode("utf-8")  # whole characters
    assert batched == _whole_prefix(data)


_PUNCTUATION = re.compile(r"[^\w\s]|_")


@given(st.text(), st.integers(min_value=0, max_value=400))
def test_forced_text_ends_after_a_run_of_punctuation(text: str, cut: int) -> None:
    data = text.encode()[:cut]
    whole = _whole_prefix(data).decode()
    batched = batched_text(data, ends=False).decode()
    assert whole.startswith(batched)
    if batched:
        assert all(_PUNCTUATION.fullmatch(char) for char in batched[-2:]), batched
        rest = whole[len(batched) :]
        assert not rest or not _PUNCTUATION.fullmatch(rest[0]), (batched, rest)
    # Nothing after it ends a run of two: it was cut as late as it could be.
    later = whole[len(batched) :]
    for end in range(2, len(later) + 1):
        assert not all(_PUNCTUATION.fullmatch(char) for char in (batched + later[:end])[-2:])


def test_forced_text_leaves_the_word_the_model_is_choosing_to_it() -> None:
    assert batched_text(b"_", ends=False) == b""
    assert batched_text(b'","arguments":{"good_id":"', ends=False) == b'","arguments":{"good_id":"'
    assert batched_text(b'","qty":', ends=False) == b'","qty":'
    assert batched_text(b'","intel_id":"intel-', ends=False) == b'","intel_id":"'
    assert batched_text(b"uys}}}", ends=True) == b"uys}}}"


def _decision_grammar() -> tuple[str, str]:
    require_real_model()
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    kit = GameKit.of(GAME)
    schema = dict(kit.default.decision_tool.schema.parameters)
    opening = split_opening(json_schema_to_gbnf(json.dumps(schema)))
    assert opening is not None
    return opening.text, opening.grammar


def test_compact_drops_only_the_space_between_json_tokens() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    _, grammar = _decision_grammar()
    assert 'space ::= " "?' in grammar
    compacted = compact(grammar)
    assert 'space ::= ""' in compacted
    assert compacted.replace('space ::= ""', 'space ::= " "?') == grammar
    LlamaGrammar.from_string(compacted, verbose=False)
    assert compact("root ::= [a-z]+\n") == "root ::= [a-z]+\n"


_PLAYER_LINES = (
    "Sell me three fuel cells.",
    "What have you heard about the patrols?",
    "I have ore to sell, 5 units, what do you pay?",
    "I need passage to Ceres Deep.",
    "Nice weather on the ring today.",
    "Buy my ore.",
    "What's the fare to Kessler's Hollow?",
    "Got any work for me?",
    "I'll take two drive parts.",
    "Tell me about the shortcut.",
)


def _prompt(line: str, opening: str) -> str:
    return (
        "<|im_start|>system\nYou are Old Karsk, a trader in a bar. You sell fuel cells and buy"
        " ore. Decide what you do.<|im_end|>\n"
        f"<|im_start|>user\n{line}<|im_end|>\n<|im_start|>assistant\n{opening}"
    )


class _Passes:
    """Counts the model's forward passes after the prompt (`Llama.eval` calls)."""

    def __init__(self, llama: Any) -> None:
        self.count = 0
        self._eval = llama.eval

        def counted(tokens: Any) -> None:
            self.count += 1
            self._eval(tokens)

        llama.eval = counted
        self._llama = llama

    def restore(self) -> None:
        self._llama.eval = self._eval


def _jump(llama: Any, prompt: str, grammar: str) -> tuple[str, dict[str, Any], int]:
    """The jump-forward answer, its last chunk, and the passes after the prompt's."""
    from starharness.localmodel import jump_forward
    from starharness.localmodel.grammar_filter import GrammarFilter

    checked = GrammarFilter(llama, grammar, top_k=None, penalties=(1.1, 0.0, 0.0))
    passes = _Passes(llama)
    try:
        chunks = list(jump_forward.complete(llama, prompt, checked, max_tokens=80))
    finally:
        passes.restore()
    assert checked.broken is None
    text = "".join(chunk["choices"][0]["text"] for chunk in chunks)
    return text, chunks[-1], passes.count - 1


@pytest.mark.realmodel
def test_a_decision_is_the_grammar_bound_chains_in_half_the_passes(llama: Any) -> None:
    """The same action as the grammar-bound chain's greedy answer, line by line, in at most
    half its forward passes. Not always the same arguments on SmolLM2: under the grammar the
    chain reads forced text in the fragments it picks (`i`, `nt`, `e`, `l` for `intel`),
    here it is read as the tokenizer writes it, as every later request reads it anyway."""
    from llama_cpp.llama_grammar import LlamaGrammar

    opening, grammar = _decision_grammar()
    ours_passes = chain_passes = 0
    for line in _PLAYER_LINES:
        prompt = _prompt(line, opening)
        llama.reset()
        chain = llama.create_completion(
            prompt=prompt,
            max_tokens=80,
            temperature=0.0,
            repeat_penalty=1.1,
            grammar=LlamaGrammar.from_string(compact(grammar), verbose=False),
        )
        llama.reset()
        text, last, passes = _jump(llama, prompt, compact(grammar))
        assert last["choices"][0]["finish_reason"] == "stop"
        ours = json.loads(opening + text)["action"]
        theirs = json.loads(opening + chain["choices"][0]["text"])["action"]
        assert ours["name"] == theirs["name"], (line, ours, theirs)
        ours_passes += passes
        # A pass for every token, and one more for the end.
        chain_passes += chain["usage"]["completion_tokens"] + 1
    assert ours_passes <= chain_passes / 2, (ours_passes, chain_passes)


@pytest.mark.realmodel
def test_a_forced_ending_takes_no_pass(llama: Any) -> None:
    llama.reset()
    grammar = 'root ::= "{\\"a\\":" ("1" | "2") ",\\"b\\":\\"xyz\\"}"'
    prompt = "<|im_start|>user\nWrite the JSON.<|im_end|>\n<|im_start|>assistant\n"
    text, last, passes = _jump(llama, prompt, grammar)
    assert re.fullmatch(r'\{"a":[12],"b":"xyz"\}', text), text
    assert last["choices"][0]["finish_reason"] == "stop"
    assert passes == 1  # after the model chose the opening token; the rest is forced


@pytest.mark.realmodel
def test_after_the_servers_own_completion_the_grammar_is_this_answers(llama: Any) -> None:
    """`Llama.sample` would reuse the sampler chain the last `create_completion` built, with
    that completion's grammar, finished, in it: the answer was empty."""
    from llama_cpp.llama_grammar import LlamaGrammar

    opening, grammar = _decision_grammar()
    prompt = _prompt(_PLAYER_LINES[0], opening)
    llama.reset()
    llama.create_completion(
        prompt=prompt,
        max_tokens=80,
        temperature=0.0,
        grammar=LlamaGrammar.from_string('root ::= "x"', verbose=False),
    )
    text, last, _ = _jump(llama, prompt, compact(grammar))
    assert last["usage"]["completion_tokens"] > 0
    assert json.loads(opening + text)["action"]["name"]


@pytest.mark.realmodel
def test_a_length_limit_ends_the_answer_as_the_servers_does(llama: Any) -> None:
    from starharness.localmodel import jump_forward
    from starharness.localmodel.grammar_filter import GrammarFilter

    opening, grammar = _decision_grammar()
    llama.reset()
    checked = GrammarFilter(llama, compact(grammar), top_k=None)
    prompt = _prompt(_PLAYER_LINES[0], opening)
    chunks = list(jump_forward.complete(llama, prompt, checked, max_tokens=3))
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["usage"]["completion_tokens"] <= 3

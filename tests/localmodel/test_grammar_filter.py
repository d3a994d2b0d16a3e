"""The grammar filter on SmolLM2 in this process: greedy answers are the grammar-bound chain's,
token for token; sampled answers keep the grammar; a token the grammar refuses ends the
answer instead of aborting the process."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from starharness.localmodel.call_opening import split_opening
from starharness.npc.encounter import GameKit
from starharness.voyage import GAME

pytestmark = pytest.mark.realmodel

_PLAYER_LINES = (
    "Sell me three fuel cells.",
    "What have you heard about the patrols?",
    "I have ore to sell, 5 units, what do you pay?",
    "Nice weather on the ring today.",
)


def _calls() -> list[tuple[str, str]]:
    """The sample game's decision and speech calls: their opening and the grammar of the rest."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    kit = GameKit.of(GAME)
    found: list[tuple[str, str]] = []
    for schema in (kit.default.decision_tool.schema.parameters, kit.speech_tool.schema.parameters):
        opening = split_opening(json_schema_to_gbnf(json.dumps(dict(schema))))
        assert opening is not None
        found.append((opening.text, opening.grammar))
    return found


def _prompt(line: str, opening: str) -> str:
    return (
        "<|im_start|>system\nYou are Old Karsk, a trader in a bar. Answer as JSON.<|im_end|>\n"
        f"<|im_start|>user\n{line}<|im_end|>\n<|im_start|>assistant\n{opening}"
    )


@pytest.mark.parametrize("repeat_penalty", [1.0, 1.1])  # 1.1: the server's default
def test_a_greedy_answer_is_the_grammar_bound_chains_token_for_token(
    llama: Any, repeat_penalty: float
) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    from starharness.localmodel.grammar_filter import GrammarFilter

    sampling = {"temperature": 0.0, "repeat_penalty": repeat_penalty}
    for opening, gbnf in _calls():
        for line in _PLAYER_LINES:
            prompt = _prompt(line, opening)
            # Each from a fresh context: a prompt evaluated in another batch shape gives
            # slightly different logits, and near-ties then go the other way.
            llama.reset()
            chain = llama.create_completion(
                prompt=prompt,
                max_tokens=48,
                grammar=LlamaGrammar.from_string(gbnf, verbose=False),
                **sampling,
            )
            checked = GrammarFilter.for_sampling(llama, gbnf, sampling)
            assert checked is not None
            llama.reset()
            filtered = llama.create_completion(
                prompt=prompt, max_tokens=48, **checked.sampling(sampling)
            )
            assert checked.broken is None
            assert filtered["choices"][0]["text"] == chain["choices"][0]["text"], line


def test_a_sampled_answer_keeps_the_grammar(llama: Any) -> None:
    from starharness.localmodel.grammar_filter import GrammarFilter

    opening, gbnf = _calls()[1]  # the speech call
    for seed in range(4):
        checked = GrammarFilter.for_sampling(llama, gbnf, {"temperature": 0.8, "top_k": 40})
        assert checked is not None
        sampling = {"temperature": 0.8, "top_k": 40, "repeat_penalty": 1.1, "seed": seed}
        answer = llama.create_completion(
            prompt=_prompt(_PLAYER_LINES[seed], opening),
            max_tokens=160,
            stop=["<|im_end|>"],
            **checked.sampling(sampling),
        )
        assert checked.broken is None
        if answer["choices"][0]["finish_reason"] == "stop":
            spoken = json.loads(opening + answer["choices"][0]["text"])
            assert isinstance(spoken["line"], str)


def test_the_filter_steps_aside_where_it_would_change_what_is_sampled(llama: Any) -> None:
    from starharness.localmodel.grammar_filter import MAX_TOP_K, GrammarFilter

    gbnf = _calls()[1][1]
    assert GrammarFilter.for_sampling(llama, gbnf, {"temperature": 0.8, "top_k": 0}) is None
    too_many = {"temperature": 0.8, "top_k": MAX_TOP_K + 1}
    assert GrammarFilter.for_sampling(llama, gbnf, too_many) is None
    assert GrammarFilter.for_sampling(llama, gbnf, {"mirostat_mode": 2}) is None


def test_a_refused_token_ends_the_answer_and_says_why(llama: Any) -> None:
    from starharness.localmodel.grammar_filter import GrammarFilter

    checked = GrammarFilter(llama, 'root ::= "yes" | "no"', top_k=None)
    vocabulary = llama.n_vocab()
    prompt = np.array(llama.tokenize(b"Answer:"), dtype=np.intc)
    scores = np.zeros(vocabulary, dtype=np.single)
    allowed = checked(prompt, scores.copy())
    assert np.isfinite(allowed).sum() < vocabulary  # "yes" and "no" only
    refused = llama.tokenize(b" maybe", add_bos=False)[0]
    ended = checked(np.append(prompt, refused).astype(np.intc), scores.copy())
    assert checked.broken is not None and str(refused) in checked.broken
    assert np.isfinite(ended).sum() == 1 and np.isfinite(ended[llama.token_eos()])


def test_a_grammar_that_does_not_parse_is_a_clear_error(llama: Any) -> None:
    from starharness.localmodel.grammar_filter import GrammarError, GrammarFilter

    with pytest.raises(GrammarError, match="could not parse"):
        GrammarFilter(llama, "root ::= (", top_k=None)

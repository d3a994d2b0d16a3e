"""Which prompt states the model server saves, restores and drops (its state cache)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.localmodel.prompt_states import (
    SLACK_TOKENS,
    plan_move,
    shared_prefix,
    superseded,
)

_TOKENS = st.lists(st.integers(0, 3), max_size=40)


def _best(keys: list[list[int]], prompt: list[int]) -> int:
    return max((shared_prefix(key, prompt) for key in keys), default=0)


@given(keys=st.lists(_TOKENS, max_size=6), newer=_TOKENS, prompt=_TOKENS, slack=st.integers(0, 8))
def test_no_prompt_loses_more_than_the_slack_when_superseded_states_go(
    keys: list[list[int]], newer: list[int], prompt: list[int], slack: int
) -> None:
    dropped = superseded(keys, newer, slack)
    kept = [key for key in keys if key not in dropped] + [newer]
    assert _best(kept, prompt) >= _best([*keys, newer], prompt) - slack
    assert newer not in dropped


def test_a_conversation_keeps_its_latest_state_and_other_npcs_keep_theirs() -> None:
    prefix_karsk = list(range(1000))
    prefix_brandt = list(range(600)) + [7] * 400
    warmed_karsk = [*prefix_karsk, 5]  # the warm-up's one generated token
    greeting = [*prefix_karsk, 1, 2, 3] + [9] * 200
    decision = [*greeting, 4] + [8] * 20  # its prompt, then what it generated
    speech = [*greeting, 6] + [10] * 60  # the decision only talked: out of view
    keys = [prefix_brandt, warmed_karsk, greeting]
    assert superseded(keys, decision) == [warmed_karsk, greeting]
    assert superseded([prefix_brandt, decision], speech) == [decision]


def test_a_state_far_from_the_newer_one_stays() -> None:
    older = list(range(500))
    newer = list(range(400)) + [0] * 300  # 100 of the older's tokens are not in it
    assert superseded([older], newer) == []
    assert superseded([older], newer, slack=100) == [older]


def test_the_slack_may_not_be_negative() -> None:
    with pytest.raises(ValueError, match="slack must be 0 or more"):
        superseded([[1]], [1, 2], slack=-1)


def test_the_default_slack_covers_a_decisions_answer() -> None:
    assert 20 <= SLACK_TOKENS <= 64


@given(live=_TOKENS, keys=st.lists(_TOKENS, max_size=6), prompt=_TOKENS, slack=st.integers(0, 8))
def test_a_move_loses_no_more_than_the_slack_of_the_live_context(
    live: list[int], keys: list[list[int]], prompt: list[int], slack: int
) -> None:
    move = plan_move(live, keys, prompt, slack)
    start = list(move.restore) if move.restore is not None else live
    # The prompt is evaluated from the state that has most of it.
    assert shared_prefix(start, prompt) == max(_best(keys, prompt), shared_prefix(live, prompt))
    if move.restore is not None:
        assert list(move.restore) in keys
    # What is left of the live context: what the prompt keeps of it, or a saved state.
    kept = live[: shared_prefix(live, prompt if move.restore is None else start)]
    left = [*keys, *([live] if move.save_live else []), kept]
    assert _best(left, live) >= len(live) - slack


@given(live=_TOKENS, keys=st.lists(_TOKENS, max_size=6), slack=st.integers(0, 8))
def test_a_prompt_that_continues_the_live_context_moves_nothing(
    live: list[int], keys: list[list[int]], slack: int
) -> None:
    move = plan_move(live, keys, [*live, 1, 2], slack)
    assert not move.save_live
    assert move.restore is None or shared_prefix(move.restore, [*live, 1, 2]) > len(live)


def test_one_conversation_saves_nothing_and_a_switch_saves_one_state_and_restores_one() -> None:
    karsk = [*range(1000), 5]  # a warmed prefix and its one generated token
    brandt = [*range(600), *[7] * 400, 5]
    saved = [karsk]
    greeting = [*karsk[:-1], 1, 2, 3]
    move = plan_move(brandt, saved, greeting)
    assert move == plan_move(brandt, saved, greeting)  # pure
    assert move.save_live and move.restore == tuple(karsk)
    saved.append(brandt)
    live = [*greeting, *[9] * 90]  # the greeting's speech
    decision = [*live, *[4] * 20]  # the next line and the decision's opening
    assert plan_move(live, saved, decision).save_live is False
    live = [*decision, *[8] * 12]  # what the decision generated
    speech = [*decision[:-3], 6, 6]  # the decision only talked: out of view
    assert plan_move(live, saved, speech) == plan_move([], [], [])
    back = plan_move(live, saved, [*brandt[:-1], 1])
    assert back.save_live and back.restore == tuple(brandt)


def test_a_move_refuses_a_negative_slack() -> None:
    with pytest.raises(ValueError, match="slack must be 0 or more"):
        plan_move([1], [], [1], slack=-1)

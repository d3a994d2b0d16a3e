"""Which saved prompt states a newer one makes redundant (the server's lean state cache)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.localmodel.prompt_states import SLACK_TOKENS, shared_prefix, superseded

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

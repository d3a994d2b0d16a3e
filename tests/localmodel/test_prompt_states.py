"""Which prompt states the model server saves, restores and drops (its state cache)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.localmodel.prompt_states import (
    GROWTH_SHARE,
    SLACK_TOKENS,
    buffer_size,
    plan_move,
    respelled,
    reusable_buffer,
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


@given(sizes=st.lists(st.integers(0, 100), max_size=6), needed=st.integers(0, 120))
def test_a_state_goes_into_the_smallest_spare_buffer_that_holds_it(
    sizes: list[int], needed: int
) -> None:
    index = reusable_buffer(sizes, needed)
    fitting = [size for size in sizes if size >= needed]
    if index is None:
        assert not fitting
    else:
        assert sizes[index] >= needed and sizes[index] == min(fitting)


def test_a_new_buffer_leaves_room_for_the_next_turns() -> None:
    # The 1.5B model: 68 MB for 2,500 tokens, 28 KB a token; a turn adds 100-300 tokens.
    state = 68 * 2**20
    grown = buffer_size(state)
    assert grown == state + state // GROWTH_SHARE
    assert reusable_buffer([grown], state + 300 * 28 * 1024) == 0
    assert reusable_buffer([grown], state * 2) is None
    with pytest.raises(ValueError, match="0 bytes or more"):
        buffer_size(-1)


_PIECES = {
    1: b"a",
    2: b"b",
    3: b"ab",
    4: b"c",
    5: b"bc",
    6: b"\xc3",
    7: b"\xa9",
    8: b"\xc3\xa9",
    9: b"",  # "é" whole and in its two bytes
}


def _spell(tokens: list[int]) -> bytes:
    return b"".join(_PIECES[token] for token in tokens)


@given(
    canonical=st.lists(st.sampled_from([1, 2, 3, 4, 5, 8]), max_size=12),
    held=st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8]), max_size=12),
)
def test_a_respelled_prompt_spells_the_same_text_and_keeps_more_of_what_is_held(
    canonical: list[int], held: list[int]
) -> None:
    found = respelled(canonical, held, _PIECES.__getitem__)
    if found is None:
        return
    assert _spell(found) == _spell(canonical)
    reused = shared_prefix(found, held)
    assert reused > shared_prefix(canonical, held)
    # The rest is the tokenizer's own tokens, from a character's start.
    assert found[reused:] == canonical[len(canonical) - (len(found) - reused) :]
    assert not _spell(found[reused:])[:1] or _spell(found[reused:])[0] & 0xC0 != 0x80


def test_an_npc_line_the_model_cut_its_own_way_is_kept_whole() -> None:
    # The model sampled "a" "b" where the tokenizer reads "ab"; the history then goes on.
    line_sampled, line_read = [1, 2, 4], [3, 4]
    prompt = [9, 7, *line_read, 5, 1]
    held = [9, 7, *line_sampled]
    assert respelled(prompt, held, _PIECES.__getitem__) == [*held, 5, 1]
    # Held tokens that spell other text are not taken past where it parts.
    assert respelled(prompt, [9, 7, 1, 1], _PIECES.__getitem__) is None
    # A cut inside a character ("\xc3" then "\xa9" against "é") backs off to its start.
    assert respelled([1, 8, 4], [1, 6], _PIECES.__getitem__) is None
    assert respelled([1, 8, 4], [1, 6, 7, 2], _PIECES.__getitem__) == [1, 6, 7, 4]
    # A leading beginning-of-text token must be the same in both.
    assert respelled([0, 3], [1, 2], lambda t: _PIECES.get(t, b""), lead=1) is None

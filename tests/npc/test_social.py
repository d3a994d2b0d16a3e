"""The social framework without a server: who witnesses, how gossip is planned (bounded,
decaying, seeded, never told twice), and the tokenizer-free estimate that budgets rely on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.npc.social import (
    GossipRules,
    Hearsay,
    TokenBudget,
    WitnessRules,
    acquaintances,
    attributed,
    estimate_tokens,
    plan_gossip,
    witnesses,
)

RULES = GossipRules(seed="s", per_pair=2, per_day=5, decay=0.5, floor=10, chance=1.0)


def test_witnesses_are_everyone_present_but_the_party_once_each() -> None:
    assert witnesses("a", ["c", "a", "b", "c"]) == ("b", "c")
    assert witnesses("a", ["a"]) == ()
    rules = WitnessRules(kinds=frozenset({"deal"}), share=0.5)
    assert rules.witnessed("deal") and not rules.witnessed("mood")
    assert rules.importance(60) == 30
    with pytest.raises(ValueError, match="importance"):
        rules.importance(101)


def test_acquaintances_share_a_place_or_a_route() -> None:
    places = {"a": "bar", "b": "bar", "c": "bay", "d": "depot"}
    # A route's seller meets whoever is at its far end; nobody else meets across places.
    assert acquaintances(places, [("b", "bay")]) == (("a", "b"), ("b", "c"))
    assert acquaintances(places, [("gone", "bay")]) == (("a", "b"),)


def test_a_chain_of_hops_decays_and_ends_at_the_floor() -> None:
    pairs = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    held = [Hearsay("a", 1, 1, "p", 80, 0, "they paid")]
    known: dict[str, set[int]] = {}
    reached: list[tuple[str, int, int]] = []
    for day in range(1, 8):
        passes = plan_gossip(pairs, held, known, RULES, day)
        for told in passes:
            reached.append((told.listener_id, told.importance, told.hops))
            held.append(
                Hearsay(told.listener_id, 100 + len(held), 1, "p", told.importance, told.hops, "x")
            )
    # 80 -> 40 -> 20 -> 10; at 10 the next retelling (5) falls below the floor.
    assert reached == [("b", 40, 1), ("c", 20, 2), ("d", 10, 3)]


@st.composite
def _worlds(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[Hearsay]]:
    npcs = [f"n{i}" for i in range(draw(st.integers(2, 6)))]
    pairs = draw(st.lists(st.tuples(st.sampled_from(npcs), st.sampled_from(npcs)), max_size=10))
    items = draw(
        st.lists(
            st.tuples(st.sampled_from(npcs), st.integers(0, 100), st.integers(1, 8)), max_size=20
        )
    )
    hearsay = [
        Hearsay(holder, index, origin, "p", importance, 0, f"memory {index}")
        for index, (holder, importance, origin) in enumerate(items)
    ]
    return pairs, hearsay


@settings(max_examples=150, deadline=None)
@given(_worlds(), st.integers(1, 400), st.text(max_size=5))
def test_a_plan_is_bounded_decayed_seeded_and_never_repeats_itself(
    world: tuple[list[tuple[str, str]], list[Hearsay]], day: int, seed: str
) -> None:
    pairs, hearsay = world
    rules = GossipRules(seed=seed, per_pair=2, per_day=7, decay=0.6, floor=20)
    passes = plan_gossip(pairs, hearsay, {}, rules, day)
    assert passes == plan_gossip(pairs, list(reversed(hearsay)), {}, rules, day)
    assert len(passes) <= rules.per_day
    talks = {(a, b) for a, b in pairs} | {(b, a) for a, b in pairs}
    held = {(h.holder_id, h.origin_id) for h in hearsay}
    per_way: dict[tuple[str, str], int] = {}
    heard: set[tuple[str, int]] = set()
    for told in passes:
        assert (told.teller_id, told.listener_id) in talks
        assert (told.listener_id, told.origin_id) not in held  # never tells what they know
        assert (told.listener_id, told.origin_id) not in heard  # nor twice in a day
        heard.add((told.listener_id, told.origin_id))
        source = next(h for h in hearsay if h.memory_id == told.memory_id)
        assert told.importance == int(source.importance * 0.6) >= rules.floor
        assert told.hops == source.hops + 1
        key = (told.teller_id, told.listener_id)
        per_way[key] = per_way.get(key, 0) + 1
        assert per_way[key] <= rules.per_pair


def test_another_seed_spreads_differently_somewhere() -> None:
    pairs = [(f"n{i}", f"n{j}") for i in range(6) for j in range(i + 1, 6)]
    hearsay = [Hearsay(f"n{i % 6}", i, i, "p", 50 + i, 0, "x") for i in range(30)]
    rules = GossipRules(seed="one", per_day=6, chance=0.5)
    plans = {
        seed: [plan_gossip(pairs, hearsay, {}, GossipRules(seed, per_day=6, chance=0.5), d)
               for d in range(1, 6)]
        for seed in ("one", "two")
    }  # fmt: skip
    assert plans["one"] == [plan_gossip(pairs, hearsay, {}, rules, d) for d in range(1, 6)]
    assert plans["one"] != plans["two"]


def test_attribution_names_the_teller() -> None:
    assert attributed("Jo", "They  paid\n well.") == "Jo says: They paid well."


@given(st.text(max_size=300))
def test_the_estimate_errs_high_and_a_budget_holds_what_it_says(text: str) -> None:
    tokens = estimate_tokens(text)
    assert tokens >= len(text) / 4 and tokens >= len(text.split())
    assert TokenBudget(tokens=max(16, tokens)).fits(text)


def test_a_budget_too_small_for_anything_is_refused() -> None:
    with pytest.raises(ValueError, match="16 tokens"):
        TokenBudget(tokens=3)

"""Lore without a server: declarations refused with a clear reason, the SQLite FTS5 index
(found by topic, filtered by who may know, rebuilt when the lore changes), the budget, and
player text that can never be full-text query syntax (hypothesis, against a real index)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from starharness.npc import Lore, LoreEntry, LoreError
from starharness.npc.lore import (
    COMMON_MATCHES,
    MemoryLoreIndex,
    SqliteLoreDriver,
    fts5_match,
    install_lore,
    lore_is_current,
    lore_lines,
    lore_search,
    query_for,
    recall,
    render_lore,
    search_lore,
    search_words,
)

ENTRIES = (
    LoreEntry("bay", "The Hollow is a pirate bay where spice is sold openly.", ("hollow", "bay")),
    LoreEntry("routes", "Routes to the Hollow take two days.", ("route", "travel")),
    LoreEntry("locks", "The lower locks are unwatched on odd days.", ("locks",), faction="crew"),
    LoreEntry("debt", "Vex owes the dock bosses forty thousand.", ("debt",), npc="n-vex"),
)
LORE = Lore(ENTRIES, factions={"n-karsk": ("crew",)})


def _found(lore: Lore, npc_id: str, said: str) -> list[str]:
    index = MemoryLoreIndex(lore)
    try:
        return [entry.id for entry in recall(lore, index.search, npc_id, said)]
    finally:
        index.close()


def test_a_topic_finds_its_entry_by_stem_and_tag() -> None:
    assert _found(LORE, "n-anyone", "Any news of the pirate bay?")[0] == "bay"
    # Porter stemming: "route" finds "Routes"; a tag alone is enough.
    assert _found(LORE, "n-anyone", "which route?") == ["routes"]
    assert _found(LORE, "n-anyone", "tell me about travel") == ["routes"]


def test_only_those_who_may_know_an_entry_are_given_it() -> None:
    assert _found(LORE, "n-karsk", "the lower locks") == ["locks"]
    assert _found(LORE, "n-brandt", "the lower locks") == []
    assert _found(LORE, "n-vex", "your debt") == ["debt"]
    assert _found(LORE, "n-karsk", "Vex's debt") == []


def test_a_line_of_common_words_searches_nothing() -> None:
    assert query_for(LORE, "n-karsk", "What do you know? Tell me, please!") is None
    assert _found(LORE, "n-karsk", "") == []


def test_the_budget_passes_over_a_long_entry_for_a_shorter_one() -> None:
    long = LoreEntry("long", "spice " * 30 + "end.", ("spice",))
    short = LoreEntry("short", "Spice is contraband.", ("spice",))
    alone = len(render_lore((long,)))
    lore = Lore((long, short), budget=alone, max_entries=3)
    given = recall(lore, MemoryLoreIndex(lore).search, "n", "spice")
    block = render_lore(given)
    assert len(block) <= lore.budget and [e.id for e in given] in (["long"], ["short"])
    roomy = Lore((long, short), budget=alone + 40, max_entries=3)
    assert {e.id for e in recall(roomy, MemoryLoreIndex(roomy).search, "n", "spice")} == {
        "long",
        "short",
    }
    assert lore_lines("scene\n\n" + block) == [e.text.strip() for e in given]


@pytest.mark.parametrize(
    ("entries", "factions", "budget", "says"),
    [
        ((LoreEntry("a", "x"), LoreEntry("a", "y")), {}, 480, "share the id 'a'"),
        ((LoreEntry("a", "x", faction="navy"),), {}, 480, "faction 'navy', which no NPC"),
        ((LoreEntry("a", "x" * 500),), {}, 480, "over the budget of 480"),
    ],
)
def test_a_lore_that_cannot_work_is_refused_saying_why(
    entries: tuple[LoreEntry, ...], factions: dict[str, tuple[str, ...]], budget: int, says: str
) -> None:
    with pytest.raises(LoreError, match=says):
        Lore(entries, factions=factions, budget=budget)


def test_an_entry_that_cannot_work_is_refused_saying_why() -> None:
    with pytest.raises(LoreError, match="both a faction and an NPC"):
        LoreEntry("a", "x", faction="f", npc="n")
    with pytest.raises(LoreError, match="has no text"):
        LoreEntry("a", "  ")
    with pytest.raises(LoreError, match="must be one word"):
        LoreEntry("a", "x", ("two words",))


def test_the_index_is_rebuilt_when_the_lore_changes_and_only_then() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    driver = SqliteLoreDriver(conn)
    assert not lore_is_current(driver, LORE)
    assert install_lore(driver, LORE) and lore_is_current(driver, LORE)
    assert not install_lore(driver, LORE)
    debt_free = LoreEntry("debt", "Vex is debt-free now.", npc="n-vex")
    changed = Lore((*ENTRIES[:3], debt_free), factions=LORE.factions)
    assert not lore_is_current(driver, changed)
    assert install_lore(driver, changed)
    query = query_for(changed, "n-vex", "debt")
    assert query is not None
    assert [e.text for e in search_lore(driver, query)] == ["Vex is debt-free now."]


_INDEX = MemoryLoreIndex(LORE)


@given(st.text())
@example('"')
@example('NEAR(a b) * ^bay OR AND NOT -x "unclosed')
@example("hollow:bay {body tags}: bay*")
@example("_ __ ___")
@example("\u0301\u0301 Ω 中文 é")
@example("")
def test_no_player_text_is_query_syntax_or_an_error(said: str) -> None:
    query = query_for(LORE, "n-karsk", said)
    if query is None:
        return
    assert all(word.isalnum() for word in query.words)
    found = _INDEX.search(query)  # raises on an FTS5 syntax error
    assert {entry.knower for entry in found} <= set(query.knowers)


@given(st.lists(st.sampled_from(["bay", "route", "locks", "AND", "OR", "NOT", "NEAR", "*"])))
def test_words_that_are_operators_are_searched_as_words(words: list[str]) -> None:
    said = " ".join(words)
    expected = [w for w in dict.fromkeys(w.casefold() for w in words) if w.isalnum()]
    expected = [w for w in expected if w not in LORE.stopwords]
    assert list(search_words(said, LORE.stopwords, 50)) == expected
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    if expected:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (fts5_match(expected),)).fetchall()


def test_a_world_without_its_own_index_is_served_from_one_in_memory() -> None:
    class PlainWorld:
        pass

    search = lore_search(LORE, PlainWorld())
    assert search == lore_search(LORE, PlainWorld())  # one index per lore, shared
    query = query_for(LORE, "n-karsk", "pirate bay")
    assert query is not None and [e.id for e in search(query)] == ["bay"]


def test_words_too_common_to_tell_entries_apart_are_not_ranked_beside_rarer_ones() -> None:
    many = COMMON_MATCHES + 20
    crowd = tuple(LoreEntry(f"dock-{n}", f"Dock {n} of the station is busy.") for n in range(many))
    hollow = LoreEntry("hollow", "The station's ships avoid the Hollow.", ("hollow",))
    lore = Lore((*crowd, hollow), max_entries=3)
    index = MemoryLoreIndex(lore)
    # "station" is in every entry: with a rarer word beside it, only the rarer word is searched.
    query = query_for(lore, "n", "the station and the hollow")
    assert query is not None and [e.id for e in index.search(query)] == ["hollow"]
    # A line of common words alone still finds entries, those with all of its words.
    query = query_for(lore, "n", "busy station")
    assert query is not None
    found = index.search(query)
    assert found and all("busy" in e.text and "station" in e.text for e in found)


def test_recall_gives_at_most_the_entries_asked_for_best_first() -> None:
    lore = Lore(
        (
            LoreEntry("a", "Spice is sold openly at the bay."),
            LoreEntry("b", "Spice spoils in the damp."),
            LoreEntry("c", "Spice prices double in winter."),
        ),
        max_entries=3,
    )
    search = MemoryLoreIndex(lore).search
    every = recall(lore, search, "n", "spice")
    assert len(every) == 3
    assert recall(lore, search, "n", "spice", 1) == every[:1]
    with pytest.raises(LoreError, match="local_max_entries"):
        Lore((), local_max_entries=0)

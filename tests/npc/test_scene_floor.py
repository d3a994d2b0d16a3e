"""The scene's parts without a server: who a line addresses (the floor rule) and the frames
that open a scene and speak in it, checked over generated input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.npc.frames import MAX_SCENE_NPCS, FrameError, parse_up_frame
from starharness.npc.server.floor import Named, addressed

BAR = [Named("k", "Jonah Karsk"), Named("b", "Ilse Brandt"), Named("v", "Vex")]


def test_a_line_addresses_the_npcs_it_names_in_the_order_named() -> None:
    assert addressed("Brandt, and you, Karsk?", BAR) == ["b", "k"]
    assert addressed("ilse? JONAH?", BAR) == ["b", "k"]
    assert addressed("Vex owes money", BAR) == ["v"]
    assert addressed("hello there", BAR) == []
    # Whole words only: a name inside another word addresses no one.
    assert addressed("the karsks and brandts of this world", BAR) == []
    # An NPC naming itself is not turning to anyone.
    assert addressed("Karsk never lies. Ask Ilse.", BAR, speaker="k") == ["b"]


def test_a_word_two_npcs_share_addresses_neither_but_their_full_names_do() -> None:
    twins = [Named("a", "Ada Lind"), Named("b", "Bo Lind")]
    assert addressed("Lind?", twins) == []
    assert addressed("Bo Lind, then Ada Lind", twins) == ["b", "a"]
    assert addressed("Ada, what does Bo think?", twins) == ["a"]  # "Bo" is too short a word


_names = st.lists(
    st.from_regex(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?", fullmatch=True),
    min_size=1,
    max_size=MAX_SCENE_NPCS,
    unique=True,
)


@given(_names, st.text(max_size=200), st.data())
def test_addressing_never_invents_or_repeats_anyone(
    names: list[str], text: str, data: st.DataObject
) -> None:
    npcs = [Named(f"n{i}", name) for i, name in enumerate(names)]
    speaker = data.draw(st.sampled_from([None, *[npc.id for npc in npcs]]))
    found = addressed(text, npcs, speaker=speaker)
    assert len(found) == len(set(found))
    assert set(found) <= {npc.id for npc in npcs} - {speaker}


@given(_names, st.data())
def test_a_full_name_in_any_words_addresses_its_npc(names: list[str], data: st.DataObject) -> None:
    npcs = [Named(f"n{i}", name) for i, name in enumerate(names)]
    chosen = data.draw(st.sampled_from(npcs))
    before = data.draw(st.sampled_from(["", "Well, ", "and you, ", "hey "]))
    after = data.draw(st.sampled_from(["", "?", ", what now?", "! hm"]))
    assert chosen.id in addressed(f"{before}{chosen.name}{after}", npcs)


def _open(npc_id: str, npc_ids: list[str]) -> str:
    frame = {"t": "encounter.open", "id": "s", "npcId": npc_id, "npcIds": npc_ids}
    return json.dumps({**frame, "playerId": "p"})


_ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


@given(st.lists(_ids, min_size=1, max_size=MAX_SCENE_NPCS, unique=True), st.data())
def test_any_scene_of_one_to_four_distinct_npcs_parses(
    npc_ids: list[str], data: st.DataObject
) -> None:
    first = data.draw(st.sampled_from(npc_ids))
    frame = parse_up_frame(_open(first, npc_ids))
    assert getattr(frame, "npc_ids", None) == npc_ids


@given(st.lists(_ids, min_size=1, max_size=8), st.data())
def test_a_bad_scene_is_refused_as_a_bad_frame_saying_why(
    npc_ids: list[str], data: st.DataObject
) -> None:
    first = data.draw(st.sampled_from(npc_ids))
    repeated = len(set(npc_ids)) < len(npc_ids)
    if not repeated and len(npc_ids) <= MAX_SCENE_NPCS:
        return
    with pytest.raises(FrameError) as refused:
        parse_up_frame(_open(first, npc_ids))
    assert refused.value.code == "bad_frame"
    message = refused.value.message
    assert "npcIds" in message
    assert (
        ("at most 4" in message) if len(npc_ids) > MAX_SCENE_NPCS else "more than once" in message
    )


def test_a_name_that_is_a_word_of_another_name_addresses_its_own_npc() -> None:
    npcs = [Named("a", "Ada"), Named("l", "Ada Lind")]
    assert addressed("Ada?", npcs) == ["a"]
    assert addressed("Lind?", npcs) == ["l"]

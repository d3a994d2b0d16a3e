"""The changes block a local model reads instead of a whole scene again: what is new is said
once, as it is now; what is gone is said gone; nothing that stayed is said at all."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from starharness.npc.encounter.scene_changes import CHANGES_HEADING, GONE_PREFIX, scene_changes

_LINE = st.one_of(
    st.sampled_from(["Day 1. Omega", "Day 2. Omega", "The player: Ash, 10 credits", "- day 1: x"]),
    st.builds(lambda k, v: f"{k}: {v}", st.sampled_from("ABC"), st.integers(0, 3)),
)
_SCENE = st.lists(_LINE, min_size=1, max_size=8).map("\n".join)


def test_a_deal_is_said_as_the_lines_it_changed() -> None:
    first = "\n".join(
        [
            "Day 1. Omega station: a bar.",
            "Karsk: 48,000 credits.",
            "Intel for sale: [patrols] 1,200.",
            "The player: Ash, 12,000 credits; hold: empty.",
            "Memories of the player: You have never dealt with them.",
        ]
    )
    now = "\n".join(
        [
            "Day 1. Omega station: a bar.",
            "Karsk: 49,200 credits.",
            "The player: Ash, 10,800 credits; hold: empty.",
            "Memories of the player: 1 memories since day 1.",
            "- day 1: They bought the patrol times for 1,200.",
        ]
    )
    assert scene_changes(first, first) == ""
    assert scene_changes(first, now).split("\n") == [
        CHANGES_HEADING,
        "Karsk: 49,200 credits.",
        "The player: Ash, 10,800 credits; hold: empty.",
        "Memories of the player: 1 memories since day 1.",
        "- day 1: They bought the patrol times for 1,200.",
        GONE_PREFIX + "Intel for sale: [patrols] 1,200.",
    ]


@given(_SCENE, _SCENE)
def test_every_line_that_changed_is_said_and_none_that_stayed(first: str, now: str) -> None:
    block = scene_changes(first, now)
    if first == now:
        assert block == ""
        return
    before, after = Counter(first.split("\n")), Counter(now.split("\n"))
    lines = block.split("\n")
    assert lines[0] == CHANGES_HEADING
    said = Counter(line for line in lines[1:] if not line.startswith(GONE_PREFIX))
    gone = Counter(line[len(GONE_PREFIX) :] for line in lines[1:] if line.startswith(GONE_PREFIX))
    # New lines, each as often as it is new; nothing that stayed.
    assert said == after - before
    keys = {line.partition(": ")[0] if ": " in line else line for line in said}
    # Gone lines, except those a new line with the same key says as they are now.
    assert gone == Counter(
        {
            line: n
            for line, n in (before - after).items()
            if (line.partition(": ")[0] if ": " in line else line) not in keys
        }
    )

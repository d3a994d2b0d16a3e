"""What changed in an NPC's scene since the encounter first gave it to the model.

The scene is dynamic context: the runtime logs it again whenever its text changes, and the
model reads it again in full. After an accepted deal (the NPC's money and stock, the player's
money and hold) or something an NPC witnessed, that is about 300 tokens for the sample game's
scenes, which a local model on two cores evaluates before the NPC's first word: 9.9 s measured
on the 1.5B development model, for a turn after another NPC gave the player a job. On a
provider whose model runs on this machine (`PlanChoice.local_prompts`), an encounter keeps the
scene it first logged and logs only its changes as a context entry of their own: the lines
that are new, then those no longer true.

A line's key is its text up to the first ": " (all of it without one). A line gone from the
scene is listed as gone only when no new line has its key: a changed line ("The player: ...")
is said once, as it is now, not also as it was.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

CHANGES_HEADING: Final = "Changed since the scene above (the rest is as it was):"
GONE_PREFIX: Final = "No longer so: "


def scene_changes(first: str, now: str) -> str:
    """The block that says how `now` differs from `first`; "" when it does not."""
    if now == first:
        return ""
    before, after = first.split("\n"), now.split("\n")
    left = Counter(before)
    added: list[str] = []
    for line in after:
        if left[line] > 0:
            left[line] -= 1
        else:
            added.append(line)
    keys = {_key(line) for line in added}
    remaining = Counter(after)
    gone: list[str] = []
    for line in before:
        if remaining[line] > 0:
            remaining[line] -= 1
        elif _key(line) not in keys:
            gone.append(GONE_PREFIX + line)
    changed = [line for line in (*added, *gone) if line.strip()]
    return "\n".join([CHANGES_HEADING, *changed]) if changed else ""


def _key(line: str) -> str:
    head, found, _ = line.partition(": ")
    return head if found else line
